package javatio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * Every golden case of shared-schema/cases.json through the stack's own parser, router and id rule: the
 * status each case expects is the one this code decides (a data case that reads its backend must reach
 * the store with the id of its target; the store's answer, 200 or 404, is the backend's).
 */
class CasesTest {
    static final File CASES = new File("../shared-schema/cases.json");

    static Request parse(String method, String target) {
        byte[] raw = (method + " " + target + " HTTP/1.1\r\nHost: localhost\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
        Request r = HttpParser.parse(ByteBuffer.wrap(raw), 0, raw.length, n -> { throw new AssertionError("need " + n); });
        assertNotNull(r, target);
        assertEquals(0, r.refusal, target);
        return r;
    }

    @TestFactory
    Stream<DynamicTest> everyCase() {
        JsonNode root = new ObjectMapper().readTree(CASES);
        List<DynamicTest> tests = new ArrayList<>();
        for (JsonNode c : root.get("cases")) {
            String method = c.get("method").asString(), target = c.get("target").asString();
            int status = c.get("expect").get("status").asInt();
            boolean reads = !c.get("reads").isEmpty();
            tests.add(DynamicTest.dynamicTest(c.get("name").asString() + ": " + method + " " + target, () -> {
                Request r = parse(method, target);
                int route = HttpHandler.route(r);
                boolean data = route == HttpHandler.REDIS || route == HttpHandler.MYSQL || route == HttpHandler.MEMCACHE;
                int id = data ? Ids.parse(r.query) : -1;
                int decided;
                if (route == HttpHandler.NO_ROUTE) {
                    decided = 404;
                } else if (route == HttpHandler.NOT_ALLOWED) {
                    decided = 405;
                } else if (data && id < 0) {
                    decided = 400;
                } else {
                    decided = data ? -1 : 200; // -1: the store decides (200 or 404)
                }
                if (reads) {
                    assertEquals(-1, decided, "a case that reads its backend");
                    assertTrue(status == 200 || status == 404);
                    // the id reaching the store is the one in the target (percent-decoded)
                    String raw = java.net.URLDecoder.decode(target.substring(target.indexOf('?') + 1), StandardCharsets.UTF_8);
                    assertTrue(("&" + raw + "&").contains("&id=" + id + "&"), raw + " -> " + id);
                } else {
                    assertEquals(status, decided);
                }
                assertEquals(method.equals("HEAD") ? Request.HEAD : method.equals("GET") ? Request.GET : Request.OTHER, r.method);
            }));
        }
        assertTrue(tests.size() >= 100, "cases.json read: " + tests.size());
        return tests.stream();
    }
}
