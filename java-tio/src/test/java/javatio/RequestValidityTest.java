package javatio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Request validity through the stack's parser: every case of the verifier's validity check (its request
 * bytes, the status the contract names), then the Host, target and IPv6 rules on their own.
 */
class RequestValidityTest {
    private static Request parse(String s) {
        byte[] raw = s.getBytes(StandardCharsets.ISO_8859_1);
        ByteBuffer b = ByteBuffer.wrap(raw);
        Request r = HttpParser.parse(b, 0, raw.length, n -> { throw new AssertionError("need " + n); });
        assertNotNull(r, "a complete request");
        if (r.refusal != 0) {
            assertFalse(r.keepAlive, "a refusal closes");
            assertEquals(raw.length, b.position(), "nothing after a refusal is read");
        }
        return r;
    }

    private static String line(String requestLine, String host, String more) {
        return requestLine + "\r\n" + (host == null ? "" : "Host: " + host + "\r\n") + more + "\r\n";
    }

    private static String hello(String host, String more) {
        return line("GET /hello HTTP/1.1", host, more);
    }

    private static int status(String s) {
        return parse(s).refusal;
    }

    @Test
    void theVerifiersCases() {
        assertEquals(400, status(hello(null, "")), "HTTP/1.1 without Host");
        assertEquals(400, status(hello("verify", "Host: verify\r\n")), "two Host lines, the same value");
        assertEquals(400, status(hello("verify", "Host: other\r\n")), "two Host lines, different values");
        assertEquals(400, status(hello("user@verify", "")), "Host with userinfo");
        assertEquals(400, status(hello("verify/x", "")), "Host with a path");
        assertEquals(400, status(hello("verify, other", "")), "Host holding a list");
        assertEquals(400, status(hello("", "")), "an empty Host");
        assertEquals(0, status(hello("verify:8080", "")), "Host with a port");
        assertEquals(0, status(hello("[::1]:8080", "")), "Host as an IPv6 literal");
        Request old = parse(line("GET /hello HTTP/1.0", null, ""));
        assertEquals(0, old.refusal, "HTTP/1.0 without Host");
        assertEquals("/hello", old.path);
        assertEquals(400, status(line("GET * HTTP/1.1", "verify", "")), "asterisk-form with GET");
        assertEquals(400, status(line("GET verify:80 HTTP/1.1", "verify", "")), "authority-form with GET");
        Request absolute = parse(line("GET http://verify/hello HTTP/1.1", "verify", ""));
        assertEquals(0, absolute.refusal, "absolute-form");
        assertEquals("/hello", absolute.path);
        assertEquals(400, status(line("GET /hello\u00ff HTTP/1.1", "verify", "")), "a raw byte above 0x7F");
        assertEquals(400, status(line("GET /hello/\u00c0\u00af HTTP/1.1", "verify", "")), "overlong UTF-8");
        assertEquals(400, status(line("GET /hel\u0000lo HTTP/1.1", "verify", "")), "a NUL in the target");
        assertEquals(400, status(line("GET /hel\u0001lo HTTP/1.1", "verify", "")), "a control byte in the target");
        assertEquals(400, status(line("GE{T /hello HTTP/1.1", "verify", "")), "a method that is not a token");
        assertEquals(501, status(line("CONNECT verify:443 HTTP/1.1", "verify:443", "")), "CONNECT");
        assertEquals(501, status(line("G".repeat(33) + " /hello HTTP/1.1", "verify", "")), "a 33-byte method");
        int longMethod = status(line("G".repeat(100_000) + " /hello HTTP/1.1", "verify", ""));
        assertTrue(longMethod == 501 || longMethod == 414, "a 100 kB method: " + longMethod);
        assertEquals(400, status(line("GET /hello http/1.1", "verify", "")), "lower-case version");
        assertEquals(400, status(line("GET /hello HTTP/1", "verify", "")), "version without a minor");
        assertEquals(400, status(line("GET /hello HTTP/01.01", "verify", "")), "version with leading zeros");
        assertEquals(505, status(line("GET /hello HTTP/2.0", "verify", "")), "another major version");
        assertEquals(400, status(hello("verify", "X-Probe: 1\r\n Connection: close\r\n")), "obs-fold");
        assertEquals(400, status(hello("verify", "X-Probe\r\n")), "a field line without a colon");
        assertEquals(400, status(hello("verify", "X-Pr\u00f6be: 1\r\n")), "a field name with a byte above 0x7F");
        assertEquals(400, status(hello("verify", "X-Probe: a\u0000b\r\n")), "a NUL in a field value");
    }

    @ParameterizedTest
    @ValueSource(strings = {"verify", "verify:8080", "verify:", "127.0.0.1", "127.0.0.1:18004", "[::1]", "[::1]:8080",
            "[2001:db8::7]", "[1:2:3:4:5:6:7:8]", "[::ffff:192.0.2.1]:80", "xn--bcher-kva.example", "a_b~c", "%41b"})
    void validHosts(String host) {
        assertEquals(0, status(hello(host, "")), host);
        assertEquals(0, status(hello(" " + host + "\t", "")), "whitespace around the value is not part of it");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", ":80", "a b", "a,b", "user@verify", "verify/x", "verify?x", "verify#x", "verify:8o",
            "[::1", "[::1]x", "[]", "[::1::2]", "[1:2:3:4:5:6:7]", "[1:2:3:4:5:6:7:8:9]", "[12345::]", "[::1.2.3]",
            "[::256.0.0.1]", "[v1.x]", "[fe80::1%25eth0]", "h\u00f6st", "a\u0001b"})
    void invalidHosts(String host) {
        assertEquals(400, status(hello(host, "")), host);
    }

    @Test
    void hostIsOptionalInHttp10ButStillChecked() {
        assertEquals(0, status(line("GET /hello HTTP/1.0", "verify", "")));
        assertEquals(400, status(line("GET /hello HTTP/1.0", "a, b", "")));
        assertEquals(400, status(line("GET /hello HTTP/1.0", "verify", "Host: verify\r\n")));
    }

    @ParameterizedTest
    @CsvSource({
            "http://verify/hello, /hello, ''",
            "HTTP://verify:8080/redis?id=1, /redis, id=1",
            "https://[::1]/hello, /hello, ''",
            "http://verify, /, ''",
            "http://verify?x=1, /, x=1",
            "/hello?a=b&c=%20:@!$()*+;=-._~/?, /hello, a=b&c=%20:@!$()*+;=-._~/?",
    })
    void targetsServed(String target, String path, String query) {
        Request r = parse(line("GET " + target + " HTTP/1.1", "verify", ""));
        assertEquals(0, r.refusal, target);
        assertEquals(path, r.path);
        assertEquals(query, r.query);
    }

    @Test
    void commaAndApostropheAreSubDelims() {
        assertEquals("a,b'c", parse(line("GET /hello?a,b'c HTTP/1.1", "verify", "")).query);
    }

    @ParameterizedTest
    @ValueSource(strings = {"*", "verify:80", "verify", "hello", "ftp://verify/hello", "http:/verify/hello",
            "http://user@verify/hello", "http:///hello", "http://a,b/hello", "/a#b", "/a\"b", "/a<b>", "/a\\b",
            "/a^b", "/a`b", "/a{b}", "/a|b", "/a[b]"})
    void targetsRefused(String target) {
        assertEquals(400, status(line("GET " + target + " HTTP/1.1", "verify", "")), target);
    }

    @Test
    void asteriskFormWithOptionsIsNotRefused() {
        Request r = parse(line("OPTIONS * HTTP/1.1", "verify", ""));
        assertEquals(0, r.refusal);
        assertEquals("*", r.path); // routed: no such path, 404
    }

    @Test
    void methodLength() {
        assertEquals(0, status(line("G".repeat(RequestValidity.MAX_METHOD) + " /hello HTTP/1.1", "verify", "")));
        assertEquals(501, status(line("G".repeat(RequestValidity.MAX_METHOD + 1) + " /hello HTTP/1.1", "verify", "")));
        assertEquals(0, status(line("CONNECTX /hello HTTP/1.1", "verify", "")));
    }

    @Test
    void versions() {
        assertTrue(parse(line("GET /hello HTTP/1.0", null, "")).http10);
        assertFalse(parse(line("GET /hello HTTP/1.1", "verify", "")).http10);
        assertEquals(0, status(line("GET /hello HTTP/1.9", "verify", "")), "a later 1.x minor is read as 1.1");
        assertEquals(505, status(line("GET /hello HTTP/0.9", "verify", "")));
        assertEquals(505, status(line("GET /hello HTTP/3.0", "verify", "")));
        assertEquals(400, status(line("GET /hello HTTP/1.x", "verify", "")));
        assertEquals(400, status(line("GET /hello HTTP-1.1", "verify", "")));
    }

    @Test
    void ipv6Grammar() {
        assertTrue(RequestValidity.ipv6("::"));
        assertTrue(RequestValidity.ipv6("1::"));
        assertTrue(RequestValidity.ipv6("::1:2:3:4:5:6:7"));
        assertTrue(RequestValidity.ipv6("1:2:3:4:5:6:1.2.3.4"));
        assertFalse(RequestValidity.ipv6("1:2:3:4:5:6:7:1.2.3.4"));
        assertFalse(RequestValidity.ipv6("1.2.3.4::"));
        assertFalse(RequestValidity.ipv6(":1::"));
        assertFalse(RequestValidity.ipv6(":::"));
        assertFalse(RequestValidity.ipv6("::01.2.3.4"));
        assertFalse(RequestValidity.ipv6(""));
    }
}
