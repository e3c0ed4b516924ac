package bench.voovan.workaround;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.voovan.tools.buffer.ByteBufferChannel;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** HeadGuard.inspect (what of a head may reach Voovan's parser) and HeadGuard.rewrite (the head Voovan then sees). */
class HeadGuardTest {
    private static final int INCOMPLETE = HeadGuard.INCOMPLETE, PASS = HeadGuard.PASS;

    private static HeadGuard.Head head;

    private static int inspect(String raw) {
        return inspect(raw.getBytes(StandardCharsets.ISO_8859_1));
    }

    private static int inspect(byte[] raw) {
        head = new HeadGuard.Head();
        return HeadGuard.inspect(ByteBuffer.wrap(raw), raw.length, head);
    }

    private static String rewrite(String raw) {
        assertEquals(PASS, inspect(raw));
        byte[] bytes = raw.getBytes(StandardCharsets.ISO_8859_1);
        ByteBufferChannel in = new ByteBufferChannel(bytes.length + 64);
        try {
            in.writeEnd(bytes, 0, bytes.length);
            return new String(HeadGuard.rewrite(in, head), StandardCharsets.ISO_8859_1);
        } finally {
            in.release();
        }
    }

    @Test
    void aCompleteHeadPassesAsItIs() {
        assertEquals(PASS, inspect("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n"));
        assertTrue(head.http11 && head.get);
        assertFalse(head.body || head.closes || head.rewrite);
        assertEquals(0, head.start);
        assertEquals("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n".length(), head.end);
    }

    @Test
    void emptyLinesBeforeTheRequestLineAreSkipped() {
        assertEquals(PASS, inspect("\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\n"));
        assertEquals(4, head.start);
        assertEquals(INCOMPLETE, inspect("\r\n\r\n"));
        assertEquals(-1, head.start);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "G", "GET /hello HTTP/1.1", "GET /hello HTTP/1.1\r", "GET /hello HTTP/1.1\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\n", "GET /hello HTTP/1.1\r\nHost: a\r\n\r"})
    void aHeadWithoutItsEmptyLineIsIncomplete(String raw) {
        assertEquals(INCOMPLETE, inspect(raw));
    }

    @Test
    void requestLineLimit() {
        String target = "/hello?" + "a".repeat(8192 - "GET /hello? HTTP/1.1".length());
        String line = "GET " + target + " HTTP/1.1";
        assertEquals(8192, line.length());
        assertEquals(PASS, inspect(line + "\r\nHost: a\r\n\r\n"));
        String longer = "GET " + target + "a HTTP/1.1";
        assertEquals(414, inspect(longer + "\r\n\r\n"));
        // refused as soon as the line is too long, before its end arrives
        assertEquals(414, inspect("GET /" + "a".repeat(9000)));
        assertEquals(INCOMPLETE, inspect("GET /" + "a".repeat(8000)));
    }

    @Test
    void headLimit() {
        String start = "GET /hello HTTP/1.1\r\nHost: a\r\n";
        String field = "X-A: " + "v".repeat(1000) + "\r\n";
        StringBuilder h = new StringBuilder(start);
        while (h.length() + field.length() + 2 <= 16384) h.append(field);
        String filler = "X-B: " + "v".repeat(16384 - h.length() - 2 - 7) + "\r\n";
        String exact = h + filler + "\r\n";
        assertEquals(16384, exact.length());
        assertEquals(PASS, inspect(exact));
        String over = h + "X-B: " + "v".repeat(16384 - h.length() - 2 - 6) + "\r\n\r\n";
        assertEquals(16385, over.length());
        assertEquals(431, inspect(over));
        // refused as soon as the head is too long, before its end arrives
        assertEquals(431, inspect(start + ("X-A: " + "v".repeat(100) + "\r\n").repeat(200)));
    }

    @Test
    void aTokenLongerThanVoovansParserArrayPasses() {
        // Voovan's parser holds 1,024 bytes per token; Workarounds widens it to MAX_HEAD
        assertEquals(PASS, inspect("GET /hello HTTP/1.1\r\nHost: a\r\nCookie: " + "c".repeat(4096) + "\r\n\r\n"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "GET /hello HTTP/1.1\nHost: a\r\n\r\n",              // bare LF after the request line
            "GET /hello HTTP/1.1\r\nHost: a\n\r\n",              // bare LF after a field
            "GET /hello HTTP/1.1\r\nHost: a\r\n\n",              // bare LF as the empty line
            "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\r\n folded\r\n\r\n",    // obs-fold
            "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\r\n\tfolded\r\n\r\n",   // obs-fold with a tab
            "GET /hello HTTP/1.1\r\nHost : a\r\n\r\n",           // whitespace before the colon
            "GET /hello HTTP/1.1\r\nHost: a\r\nBad Name: a\r\n\r\n",        // space in the name
            "GET /hello HTTP/1.1\r\nHost: a\r\nBad(Name): a\r\n\r\n",       // non-token byte in the name
            "GET /hello HTTP/1.1\r\nHost: a\r\n: a\r\n\r\n",                // empty name
            "GET /hello HTTP/1.1\r\nHost: a\r\nNoColon\r\n\r\n",            // no colon
            "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\u0001b\r\n\r\n",        // control byte in a value
            "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\u007fb\r\n\r\n",        // DEL in a value
            "GET /hello HTTP/1.1\r\nHost: a\r\nX: a\rb\r\n\r\n",            // CR in a value
            "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: +1\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 1a\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length:\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n",
            "GET /hello HTTP/1.10\r\n\r\n",
            "GET /hello http/1.1\r\n\r\n",
            "GET /hello\r\n\r\n",
            "GET  /hello HTTP/1.1\r\n\r\n",
            "GET /he llo HTTP/1.1\r\n\r\n",
            "G@T /hello HTTP/1.1\r\n\r\n",
            " GET /hello HTTP/1.1\r\n\r\n",
            "GET /hello HTTP/1.1 \r\n\r\n",
            "GET /he\u0000llo HTTP/1.1\r\n\r\n",
    })
    void badFramingIs400(String raw) {
        assertEquals(400, inspect(raw));
    }

    @Test
    void repeatedEqualContentLengthsAreOneLength() {
        assertEquals(PASS, inspect("GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\ncontent-length: 0\r\n\r\n"));
        assertFalse(head.body);
    }

    @Test
    void aBodyEndsTheConnection() {
        assertEquals(PASS, inspect("POST /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello"));
        assertTrue(head.body && head.closes);
        assertEquals(PASS, inspect("POST /hello HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"));
        assertTrue(head.body && head.closes);
        assertEquals(PASS, inspect("GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"));
        assertFalse(head.body || head.closes);
    }

    @Test
    void connectionHeader() {
        assertEquals(PASS, inspect("GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"));
        assertTrue(head.closes);
        assertEquals(PASS, inspect("GET /hello HTTP/1.1\r\nHost: a\r\nConnection: keep-alive, CLOSE\r\n\r\n"));
        assertTrue(head.closes);
        assertEquals(PASS, inspect("GET /hello HTTP/1.1\r\nHost: a\r\nConnection: closed\r\n\r\n"));
        assertFalse(head.closes);
        assertEquals(PASS, inspect("GET /hello HTTP/1.0\r\n\r\n"));
        assertTrue(head.closes);
        assertFalse(head.http11);
        assertEquals(PASS, inspect("GET /hello HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n"));
        assertFalse(head.closes);
    }

    @Test
    void theRestOfTheBufferIsNotPartOfTheHead() {
        String first = "GET /hello HTTP/1.1\r\nHost: a\r\n\r\n";
        assertEquals(PASS, inspect(first + "GET /sleep HTTP/1.1\r\n"));
        assertEquals(first.length(), head.end);
    }

    @Test
    void rewriteGivesVoovanNameColonSpaceValue() {
        assertEquals("GET /hello HTTP/1.1\r\nHost: a\r\nX: \r\nY: b\r\n\r\n",
                rewrite("GET /hello HTTP/1.1\r\nHost:a\r\nX:\r\nY: \t b \t\r\n\r\n"));
        assertTrue(head.rewrite);
    }

    @Test
    void rewriteDropsTheAdminToken() {
        assertEquals("ADMIN /voovan/admin/status HTTP/1.1\r\nHost: a\r\n\r\n",
                rewrite("ADMIN /voovan/admin/status HTTP/1.1\r\nHost: a\r\nAuth-Token: x\r\n\r\n"));
        assertTrue(head.rewrite);
    }

    @Test
    void rewriteDropsABodysFramingAndAddsClose() {
        assertEquals("POST /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
                rewrite("POST /hello HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n"
                        + "Connection: keep-alive\r\n\r\nhello"));
    }

    @Test
    void rewriteDropsContentTypeOnlyWithoutGet() {
        assertEquals("PUT /hello HTTP/1.1\r\nHost: a\r\n\r\n",
                rewrite("PUT /hello HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\n\r\n"));
        assertEquals(PASS, inspect("GET /hello HTTP/1.1\r\nHost: a\r\nContent-Type: text/plain\r\n\r\n"));
        assertFalse(head.rewrite);
    }
}
