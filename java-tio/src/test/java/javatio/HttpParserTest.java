package javatio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The stack's request parser: malformed requests, head limits, framing, persistence. */
class HttpParserTest {
    private int needed;

    private ByteBuffer buf(String s) {
        return ByteBuffer.wrap(s.getBytes(StandardCharsets.ISO_8859_1));
    }

    private Request parse(ByteBuffer b) {
        needed = -1;
        return HttpParser.parse(b, b.position(), b.limit(), n -> needed = n);
    }

    private Request parse(String s) {
        return parse(buf(s));
    }

    /** The refusal's status, 0 for a request served. */
    private int status(String s) {
        Request r = parse(s);
        assertNotNull(r, "complete request expected (" + s.length() + " bytes)");
        return r.refusal;
    }

    private static String get(String headers) {
        return "GET /hello HTTP/1.1\r\nHost: x\r\n" + headers + "\r\n";
    }

    // ------------------------------------------------------------ well-formed

    @Test
    void simpleGet() {
        Request r = parse("GET /redis?id=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        assertEquals(Request.GET, r.method);
        assertEquals("/redis", r.path);
        assertEquals("id=1", r.query);
        assertTrue(r.keepAlive);
        assertFalse(r.http10);
    }

    @Test
    void bareLfLineEndings() {
        assertEquals(0, status("GET /hello HTTP/1.1\nHost: x\n\n"));
    }

    @Test
    void headAndOtherMethods() {
        assertEquals(Request.HEAD, parse("HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n").method);
        assertEquals(Request.OTHER, parse("POST /hello HTTP/1.1\r\nHost: x\r\n\r\n").method);
        assertEquals(Request.OTHER, parse("get /hello HTTP/1.1\r\nHost: x\r\n\r\n").method); // methods are case-sensitive
    }

    @Test
    void persistence() {
        assertFalse(parse(get("Connection: close\r\n")).keepAlive);
        assertFalse(parse(get("Connection: foo, CLOSE\r\n")).keepAlive);
        Request r10 = parse("GET /hello HTTP/1.0\r\n\r\n");
        assertTrue(r10.http10);
        assertFalse(r10.keepAlive);
        assertTrue(parse("GET /hello HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keepAlive);
    }

    // ------------------------------------------------------------ incomplete

    @ParameterizedTest
    @ValueSource(strings = {"", "G", "GET /hello HTTP/1.1", "GET /hello HTTP/1.1\r\n", "GET /hello HTTP/1.1\r\nHost: x\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\n\r"})
    void incompleteHeadWaits(String s) {
        ByteBuffer b = buf(s);
        assertNull(parse(b));
        assertEquals(0, b.position(), "nothing consumed");
        assertEquals(-1, needed);
    }

    // ------------------------------------------------------------ malformed: 400

    @ParameterizedTest
    @ValueSource(strings = {
            "GET\r\n\r\n",                                  // no target
            "GET /hello\r\n\r\n",                           // no version
            " GET /hello HTTP/1.1\r\nHost: x\r\n\r\n",                 // leading space
            "GET  /hello HTTP/1.1\r\nHost: x\r\n\r\n",                 // two spaces
            "GET /hello  HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /hello HTTP/1.1 \r\n\r\n",                 // trailing space
            "GET /hello HTTP/1.x\r\n\r\n",
            "GET /hello http/1.1\r\n\r\n",
            "GET /hello HTTP/1.10\r\n\r\n",
            "G(T /hello HTTP/1.1\r\nHost: x\r\n\r\n",                  // non-tchar in the method
            "GET /he\u0001llo HTTP/1.1\r\nHost: x\r\n\r\n",            // control byte in the target
            "GET /he\u007fllo HTTP/1.1\r\nHost: x\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost : x\r\n\r\n",      // space before the colon
            "GET /hello HTTP/1.1\r\nHost\t: x\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost x\r\n\r\n",        // no colon
            "GET /hello HTTP/1.1\r\nHost: x\r\n: x\r\n\r\n",           // empty name
            "GET /hello HTTP/1.1\r\nHost: x\r\nHo(st: x\r\n\r\n",      // non-tchar in a name
            "GET /hello HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n",   // obs-fold
            "GET /hello HTTP/1.1\r\nHost: x\r\n\tfolded\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\nX: a\rb\r\n\r\n",       // CR in a value
            "GET /hello HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n",   // NUL in a value
            "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 1.5\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: \r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 5, 6\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n",
    })
    void malformedIs400(String s) {
        ByteBuffer b = buf(s);
        Request r = parse(b);
        assertNotNull(r);
        assertEquals(400, r.refusal);
        assertEquals(b.limit(), b.position(), "a refusal consumes what is buffered: nothing after it is read");
        assertFalse(r.keepAlive);
    }

    // ------------------------------------------------------------ head limits

    private static String target(int lineLength) {
        // "GET " + target + " HTTP/1.1" is lineLength bytes
        return "/" + "a".repeat(lineLength - "GET / HTTP/1.1".length());
    }

    @Test
    void requestLineAtTheLimitIsServed() {
        String line = "GET " + target(HttpParser.MAX_LINE) + " HTTP/1.1";
        assertEquals(HttpParser.MAX_LINE, line.length());
        assertEquals(0, status(line + "\r\nHost: x\r\n\r\n"));
    }

    @Test
    void requestLineOverTheLimitIs414() {
        assertEquals(414, status("GET " + target(HttpParser.MAX_LINE + 1) + " HTTP/1.1\r\nHost: x\r\n\r\n"));
    }

    @Test
    void requestLineOverTheLimitIs414BeforeItsEnd() {
        // no line end yet, but already longer than a request line may be (its CRLF counted)
        String unfinished = "GET /" + "a".repeat(HttpParser.MAX_LINE + 2 - 5);
        assertEquals(414, status(unfinished));
        assertNull(parse(unfinished.substring(0, HttpParser.MAX_LINE))); // shorter and unfinished: wait
    }

    /** A head of exactly {@code size} bytes, CRLFs included. */
    private static String head(int size) {
        String start = "GET /hello HTTP/1.1\r\nHost: x\r\nX: ";
        return start + "a".repeat(size - start.length() - 4) + "\r\n\r\n";
    }

    @Test
    void headAtTheLimitIsServed() {
        assertEquals(HttpParser.MAX_HEAD, head(HttpParser.MAX_HEAD).length());
        assertEquals(0, status(head(HttpParser.MAX_HEAD)));
    }

    @Test
    void headOverTheLimitIs431() {
        assertEquals(431, status(head(HttpParser.MAX_HEAD + 1)));
    }

    @Test
    void headOverTheLimitIs431BeforeItsEnd() {
        String partial = head(HttpParser.MAX_HEAD + 100);
        assertEquals(431, status(partial.substring(0, HttpParser.MAX_HEAD + 10)));
        assertNull(parse(partial.substring(0, HttpParser.MAX_HEAD - 10)));
    }

    @Test
    void manyHeaderLinesWithinTheLimit() {
        assertEquals(0, status(get("X: y\r\n".repeat(1000))));
    }

    // ------------------------------------------------------------ framing

    @Test
    void bodyIsReadAndDropped() {
        String req = "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello";
        ByteBuffer b = buf(req + "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
        Request r = parse(b);
        assertEquals(Request.OTHER, r.method);
        assertTrue(r.keepAlive);
        assertEquals(req.length(), b.position(), "the body is consumed with its request");
        Request next = parse(b);
        assertEquals(Request.GET, next.method);
        assertEquals(b.limit(), b.position());
    }

    @Test
    void incompleteBodyAsksForTheWholeRequest() {
        String head = "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n";
        ByteBuffer b = buf(head + "12345");
        assertNull(parse(b));
        assertEquals(head.length() + 10, needed);
        assertEquals(0, b.position());
    }

    @Test
    void identicalContentLengthsAreOne() {
        assertEquals(0, status("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nab"));
    }

    @Test
    void bodyOverTheLimitIsNotReadAndCloses() {
        ByteBuffer b = buf("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: " + (HttpParser.MAX_BODY + 1) + "\r\n\r\nabc");
        Request r = parse(b);
        assertEquals(0, r.refusal);
        assertFalse(r.keepAlive, "answered, then closed");
        assertEquals(b.limit(), b.position());
    }

    @Test
    void transferEncodingIsNotReadAndCloses() {
        ByteBuffer b = buf("POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
        Request r = parse(b);
        assertEquals(0, r.refusal);
        assertFalse(r.keepAlive);
        assertEquals(b.limit(), b.position(), "the chunked body is never read as a request");
    }

    @Test
    void pipelinedRequestsOneAtATime() {
        ByteBuffer b = buf("GET /hello HTTP/1.1\r\nHost: x\r\n\r\nHEAD /sleep HTTP/1.1\r\nHost: x\r\n\r\nGET /redis?id=2 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\nGET /x");
        assertEquals("/hello", parse(b).path);
        assertEquals(Request.HEAD, parse(b).method);
        Request third = parse(b);
        assertEquals("id=2", third.query);
        assertFalse(third.keepAlive);
        int at = b.position();
        assertNull(parse(b), "the fourth is incomplete");
        assertEquals(at, b.position());
    }

    @Test
    void parsesFromTheBufferPosition() {
        ByteBuffer b = buf("xxxxGET /sleep HTTP/1.1\r\nHost: x\r\n\r\n");
        b.position(4);
        assertEquals("/sleep", parse(b).path);
    }
}
