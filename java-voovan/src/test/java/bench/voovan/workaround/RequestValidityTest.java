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

/**
 * RequestValidity through HeadGuard.inspect, with the bytes of the verifier's request-validity cases
 * (loadtest/harness/contract/protocol.py, _validity_cases), and its Host grammar alone.
 */
class RequestValidityTest {
    private static HeadGuard.Head head;

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.ISO_8859_1);
    }

    private static int inspect(String raw) {
        byte[] b = bytes(raw);
        head = new HeadGuard.Head();
        return HeadGuard.inspect(ByteBuffer.wrap(b), b.length, head);
    }

    /** A request line with "Host: verify", as the verifier sends it. */
    private static int line(String requestLine) {
        return inspect(requestLine + "\r\nHost: verify\r\n\r\n");
    }

    private static int hello(String more) {
        return inspect("GET /hello HTTP/1.1\r\nHost: verify\r\n" + more + "\r\n");
    }

    private static boolean host(String value) {
        byte[] b = bytes(value);
        return RequestValidity.host(ByteBuffer.wrap(b), 0, b.length);
    }

    @Test
    void hostCases() {
        assertEquals(400, inspect("GET /hello HTTP/1.1\r\n\r\n"));                       // HTTP/1.1 without Host
        assertEquals(400, hello("Host: verify\r\n"));                                   // two Host lines, the same value
        assertEquals(400, hello("Host: other\r\n"));                                    // two, different values
        assertEquals(400, inspect("GET /hello HTTP/1.1\r\nHost: user@verify\r\n\r\n")); // userinfo
        assertEquals(400, inspect("GET /hello HTTP/1.1\r\nHost: verify/x\r\n\r\n"));    // a path
        assertEquals(400, inspect("GET /hello HTTP/1.1\r\nHost: verify, other\r\n\r\n")); // a list
        assertEquals(400, inspect("GET /hello HTTP/1.1\r\nHost: \r\n\r\n"));             // empty
        assertEquals(400, inspect("GET /hello HTTP/1.1\r\nHost:\r\n\r\n"));              // empty, no space
        assertEquals(400, inspect("GET /hello HTTP/1.0\r\nHost: a\r\nhost: b\r\n\r\n")); // two, in HTTP/1.0 too
        assertEquals(400, inspect("GET /hello HTTP/1.0\r\nHost: user@a\r\n\r\n"));       // invalid, in HTTP/1.0 too
    }

    @ParameterizedTest
    @ValueSource(strings = {"verify", "verify:8080", "[::1]:8080", "127.0.0.1", "127.0.0.1:80", "[::1]",
            "VERIFY.example", "a-b.c_d~e", "%41b", "verify:", "[2001:db8::7]", "[::ffff:192.0.2.1]:1",
            "[1:2:3:4:5:6:7:8]", "[v1.fe80::a+en1]", "host!$&'()*+;="})
    void validHostsAreServed(String value) {
        assertTrue(host(value), value);
        assertEquals(HeadGuard.PASS, inspect("GET /hello HTTP/1.1\r\nHost: " + value + "\r\n\r\n"));
        assertEquals(HeadGuard.PASS, inspect("GET /hello HTTP/1.1\r\nHost:\t" + value + " \r\n\r\n")); // OWS around it
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "user@verify", "verify/x", "verify, other", "a,b", "verify:80a", ":80", "a b",
            "[::1", "[::1]x", "[]", "[1:2:3:4:5:6:7:8:9]", "[1::2::3]", "[12345::1]", "[::1.2.3.256]", "[::01.2.3.4]",
            "[:1]", "[1:]", "[g::1]", "[v.x]", "[v1.]", "%4", "%zz", "ver\u00f6fy", "a[b]", "a?b", "a#b"})
    void invalidHostsAre400(String value) {
        assertFalse(host(value), value);
    }

    @Test
    void http10WithoutHostIsServed() {
        assertEquals(HeadGuard.PASS, inspect("GET /hello HTTP/1.0\r\n\r\n"));
        assertFalse(head.http11);
    }

    @Test
    void targetForms() {
        assertEquals(400, line("GET * HTTP/1.1"));                     // asterisk-form with GET
        assertEquals(HeadGuard.PASS, line("OPTIONS * HTTP/1.1"));     // its one method (then a 404 from the routes)
        assertEquals(400, line("OPTIONS *x HTTP/1.1"));
        assertEquals(400, line("GET verify:80 HTTP/1.1"));             // authority-form with GET
        assertEquals(400, line("GET hello HTTP/1.1"));                 // no form at all
        assertEquals(400, line("GET ftp://verify/hello HTTP/1.1"));    // another scheme
        assertEquals(400, line("GET http://user@verify/hello HTTP/1.1")); // userinfo in the authority
        assertEquals(400, line("GET http:///hello HTTP/1.1"));         // an empty host (RFC 9110 §4.2.1)
        assertEquals(400, line("GET http:/verify/hello HTTP/1.1"));
    }

    @Test
    void absoluteFormIsServedAsItsPath() {
        assertEquals("GET /hello HTTP/1.1\r\nHost: verify\r\n\r\n", rewrite("GET http://verify/hello HTTP/1.1\r\nHost: verify\r\n\r\n"));
        assertEquals("GET /redis?id=1 HTTP/1.1\r\nHost: verify\r\n\r\n", rewrite("GET HTTPS://[::1]:8443/redis?id=1 HTTP/1.1\r\nHost: verify\r\n\r\n"));
        assertEquals("GET / HTTP/1.0\r\n\r\n", rewrite("GET http://verify HTTP/1.0\r\n\r\n"));
        assertEquals("HEAD /?x=1 HTTP/1.1\r\nHost: v\r\n\r\n", rewrite("HEAD http://verify:80?x=1 HTTP/1.1\r\nHost: v\r\n\r\n"));
        assertEquals(400, line("GET http://verify/hel\u00fflo HTTP/1.1"));
    }

    @Test
    void originFormIsPassedAsItIs() {
        assertEquals(HeadGuard.PASS, line("GET /redis?id=%zz&x=a:b@c/d?e!$&'()*+,;=-._~ HTTP/1.1"));
        assertFalse(head.rewrite);
        assertEquals(-1, head.path);
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "GET /hello\u00ff HTTP/1.1",       // a raw byte above 0x7F
            "GET /hello/\u00c0\u00af HTTP/1.1", // overlong UTF-8
            "GET /h\u00c3\u00a9llo HTTP/1.1",   // well-formed UTF-8 is raw bytes too
            "GET /hel\u0000lo HTTP/1.1",       // NUL
            "GET /hel\u0001lo HTTP/1.1",       // a control byte
            "GET /hel\u007flo HTTP/1.1",       // DEL
            "GET /hel\tlo HTTP/1.1",           // HTAB
            "GET /hello#x HTTP/1.1",           // a fragment
            "GET /a{b} HTTP/1.1", "GET /a|b HTTP/1.1", "GET /a\"b HTTP/1.1", "GET /a<b> HTTP/1.1",
            "GET /a\\b HTTP/1.1", "GET /a^b HTTP/1.1", "GET /a`b HTTP/1.1", "GET /a[b] HTTP/1.1",
    })
    void targetBytesOutsideRfc3986Are400(String requestLine) {
        assertEquals(400, line(requestLine));
    }

    @Test
    void methods() {
        assertEquals(400, line("GE{T /hello HTTP/1.1"));                              // not a token
        assertEquals(501, inspect("CONNECT verify:443 HTTP/1.1\r\nHost: verify:443\r\n\r\n"));
        assertEquals(501, line("G".repeat(33) + " /hello HTTP/1.1"));                 // longer than 32 bytes
        assertEquals(HeadGuard.PASS, line("G".repeat(32) + " /hello HTTP/1.1"));     // 32: then 405 from the routes
        assertEquals(414, line("G".repeat(100_000) + " /hello HTTP/1.1"));           // the line is too long first
        assertEquals(HeadGuard.PASS, line("connect /hello HTTP/1.1"));               // methods are case-sensitive
        assertEquals(HeadGuard.PASS, line("GET /hello HTTP/1.1"));
        assertTrue(head.get && head.http11);
        assertEquals(HeadGuard.PASS, line("HEAD /hello HTTP/1.1"));
        assertFalse(head.get);
    }

    @Test
    void refusedAsSoonAsTheRequestLineIsComplete() {
        assertEquals(501, inspect("CONNECT verify:443 HTTP/1.1\r\n"));
        assertEquals(505, inspect("GET /hello HTTP/2.0\r\nHost: ver"));
    }

    @Test
    void versions() {
        assertEquals(400, line("GET /hello http/1.1"));
        assertEquals(400, line("GET /hello HTTP/1"));
        assertEquals(400, line("GET /hello HTTP/01.01"));
        assertEquals(400, line("GET /hello HTTP/1.10"));
        assertEquals(400, line("GET /hello HTTP/1.2"));
        assertEquals(400, line("GET /hello HTTP/1.x"));
        assertEquals(505, line("GET /hello HTTP/2.0"));
        assertEquals(505, line("GET /hello HTTP/0.9"));
        assertEquals(505, line("GET /hello HTTP/3.1"));
        assertEquals(HeadGuard.PASS, line("GET /hello HTTP/1.0"));
    }

    @Test
    void fieldLinesOfTheValidityCases() { // HeadGuard's own field checks (Framing)
        assertEquals(400, hello("X-Probe: 1\r\n Connection: close\r\n"));   // obs-fold
        assertEquals(400, hello("X-Probe\r\n"));                             // no colon
        assertEquals(400, hello("X-Pr\u00f6be: 1\r\n"));                     // a name byte above 0x7F
        assertEquals(400, hello("X-Probe: a\u0000b\r\n"));                   // NUL in a value
    }

    private static String rewrite(String raw) {
        assertEquals(HeadGuard.PASS, inspect(raw));
        assertTrue(head.rewrite);
        byte[] b = bytes(raw);
        ByteBufferChannel in = new ByteBufferChannel(b.length + 64);
        try {
            in.writeEnd(b, 0, b.length);
            return new String(HeadGuard.rewrite(in, head), StandardCharsets.ISO_8859_1);
        } finally {
            in.release();
        }
    }
}
