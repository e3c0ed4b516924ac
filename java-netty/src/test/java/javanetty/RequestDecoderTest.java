package javanetty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * RequestDecoder (Netty's HttpRequestDecoder with the contract's limits, the head's wire size, the
 * head timeout and backpressure) with HttpHandler behind it, on the pipeline Main builds, driven byte
 * by byte on an EmbeddedChannel: head limits, framing, pipelining, bodies, refusals.
 */
class RequestDecoderTest {
    private static final int HEAD_TIMEOUT_MS = 50;
    private static final Pattern STATUS = Pattern.compile("HTTP/1\\.1 (\\d{3}) ");

    private EmbeddedChannel ch;

    @BeforeEach
    void open() {
        ch = new EmbeddedChannel();
        ch.freezeTime(); // the loop's clock moves only by advanceTimeBy: timers fire when a test says so
        Main.pipeline(ch, new App(null, null, null, 1000), new Responses(ch.eventLoop()), HEAD_TIMEOUT_MS, 75_000);
    }

    @AfterEach
    void close() {
        ch.finishAndReleaseAll();
    }

    private void send(String s) {
        ch.writeInbound(Unpooled.copiedBuffer(s, StandardCharsets.ISO_8859_1));
    }

    /** Everything written to the client so far. */
    private String out() {
        StringBuilder sb = new StringBuilder();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            sb.append(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        return sb.toString();
    }

    private static String statuses(String out) {
        StringBuilder sb = new StringBuilder();
        Matcher m = STATUS.matcher(out);
        while (m.find()) sb.append(sb.isEmpty() ? "" : " ").append(m.group(1));
        return sb.toString();
    }

    /** A GET of /hello whose head (request line, headers, every CRLF, the empty line) is exactly {@code size} bytes. */
    private static String headOf(int size) {
        String start = "GET /hello HTTP/1.1\r\nHost: x\r\nX-Pad: ";
        String end = "\r\n\r\n";
        return start + "a".repeat(size - start.length() - end.length()) + end;
    }

    @Test
    void hello() {
        send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
        String out = out();
        assertTrue(out.startsWith("HTTP/1.1 200 OK\r\n"), out);
        assertTrue(out.toLowerCase().contains("\r\ncontent-length: 13\r\n"), out);
        assertTrue(out.endsWith("\r\n\r\nHello, World!"), out);
        assertTrue(ch.isActive());
    }

    @Test
    void headHasNoBody() {
        send("HEAD /hello HTTP/1.1\r\nHost: x\r\n\r\n");
        String out = out();
        assertTrue(out.toLowerCase().contains("\r\ncontent-length: 13\r\n"), out);
        assertTrue(out.endsWith("\r\n\r\n"), out);
    }

    @Test
    void requestLineOf8192IsServedAnd8193Is414() {
        String prefix = "GET /hello?x=";
        String suffix = " HTTP/1.1";
        send(prefix + "a".repeat(8192 - prefix.length() - suffix.length()) + suffix + "\r\nHost: x\r\n\r\n");
        assertEquals("200", statuses(out()));
        send(prefix + "a".repeat(8193 - prefix.length() - suffix.length()) + suffix + "\r\nHost: x\r\n\r\n");
        String out = out();
        assertEquals("414", statuses(out));
        assertTrue(out.toLowerCase().contains("\r\nconnection: close\r\n"), out);
        assertFalse(ch.isActive());
    }

    @Test
    void headOf16384BytesOnTheWireIsServed() {
        send(headOf(16384));
        assertEquals("200", statuses(out()));
        assertTrue(ch.isActive());
    }

    @Test
    void headOf16385BytesIs431() {
        send(headOf(16385));
        assertEquals("431", statuses(out()));
        assertFalse(ch.isActive());
    }

    @Test
    void manyShortHeaderLinesCountTheirCrlfs() {
        // 2,000 lines of "A: b": Netty's own count (without CRLFs) is 8,000, the wire's 12,000 + ...
        StringBuilder h = new StringBuilder("GET /hello HTTP/1.1\r\nHost: x\r\n");
        while (h.length() < 16385 - 2) h.append("A: b\r\n");
        h.setLength(16385 - 2);
        String head = h.toString();
        head = head.substring(0, head.lastIndexOf("\r\n") + 2);
        int pad = 16385 - 2 - head.length(); // fill the last line to reach 16,385 exactly
        head = head + "B: " + "c".repeat(Math.max(0, pad - 5)) + "\r\n";
        head = head + "\r\n";
        assertTrue(head.length() >= 16385, "" + head.length());
        send(head);
        assertEquals("431", statuses(out()));
    }

    @Test
    void headOverTheLimitBeforeItsEmptyLineIs431AtOnce() {
        String partial = headOf(20000);
        send(partial.substring(0, partial.length() - 2)); // complete header lines, no empty line yet
        assertEquals("431", statuses(out()));
        assertFalse(ch.isActive());
    }

    @Test
    void aHeadSentByteByByteIsCountedTheSame() {
        String head = headOf(16384);
        for (int i = 0; i < head.length(); i++) send(head.substring(i, i + 1));
        assertEquals("200", statuses(out()));
        String over = headOf(16385);
        EmbeddedChannel first = ch;
        open();
        for (int i = 0; i < over.length() && ch.isActive(); i++) send(over.substring(i, i + 1));
        assertEquals("431", statuses(out()));
        first.finishAndReleaseAll();
    }

    @Test
    void crlfsBeforeARequestLineAreNotPartOfItsHead() {
        send("\r\n\r\n" + headOf(16384));
        assertEquals("200", statuses(out()));
    }

    @Test
    void pipelinedAnswersLeaveInOrder() {
        send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\nGET /nope HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\nGET /redis?id=0 HTTP/1.1\r\nHost: x\r\n\r\n");
        assertEquals("200 404 405 400", statuses(out()));
        assertTrue(ch.isActive());
    }

    @Test
    void aBodyIsDiscardedNeverReadAsARequest() {
        String smuggled = "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n";
        send("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: " + smuggled.length() + "\r\n\r\n" + smuggled
                + "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
        assertEquals("405 200", statuses(out()));
    }

    @Test
    void aChunkedBodyIsDiscardedNeverReadAsARequest() {
        String smuggled = "GET /nope HTTP/1.1\r\nHost: x\r\n\r\n";
        send("POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + Integer.toHexString(smuggled.length()) + "\r\n" + smuggled + "\r\n0\r\n\r\n"
                + "GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
        assertEquals("405 200", statuses(out()));
    }

    @Test
    void aBodyOverTheLimitClosesAfterTheAnswer() {
        send("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: " + (HttpHandler.MAX_BODY + 1) + "\r\n\r\n");
        String out = out();
        assertEquals("405", statuses(out));
        assertTrue(out.toLowerCase().contains("\r\nconnection: close\r\n"), out);
        assertFalse(ch.isActive());
    }

    @Test
    void twoDifferentContentLengthsAre400() {
        refused("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", "400");
    }

    @Test
    void twoEqualContentLengthsAre400() {
        refused("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na", "400");
    }

    @Test
    void twoContentLengthsInHttp10Are400() {
        refused("POST /hello HTTP/1.0\r\nContent-Length: 1\r\nContent-Length: 20\r\n\r\na", "400");
    }

    @Test
    void anInvalidContentLengthIs400() {
        refused("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\na", "400");
    }

    @Test
    void transferEncodingWithContentLengthIs400() {
        refused("POST /hello HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400");
    }

    @Test
    void transferEncodingNotEndingInChunkedIs400() {
        refused("POST /hello HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", "400");
    }

    @Test
    void transferEncodingInHttp10Is400() {
        refused("POST /hello HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "400");
    }

    @Test
    void aBareLfIs400() {
        refused("GET /hello HTTP/1.1\nHost: x\n\n", "400");
    }

    @Test
    void whitespaceBeforeAColonIs400() {
        refused("GET /hello HTTP/1.1\r\nHost : x\r\n\r\n", "400");
    }

    @Test
    void aControlByteInAFieldNameIs400() {
        refused("GET /hello HTTP/1.1\r\nHost: x\r\nX\u0001Y: z\r\n\r\n", "400");
    }

    @Test
    void theRequestAfterARefusalIsNotAnswered() {
        refused("GET /hello HTTP/1.1\r\nHost : x\r\n\r\nGET /hello HTTP/1.1\r\nHost: x\r\n\r\n", "400");
    }

    private void refused(String request, String status) {
        send(request);
        String out = out();
        assertEquals(status, statuses(out), out);
        assertTrue(out.toLowerCase().contains("\r\nconnection: close\r\n"), out);
        assertFalse(ch.isActive());
    }

    @Test
    void http10IsClosedUnlessKeptAlive() {
        send("GET /hello HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
        String out = out();
        assertTrue(out.toLowerCase().contains("\r\nconnection: keep-alive\r\n"), out);
        assertTrue(ch.isActive());
        send("GET /hello HTTP/1.0\r\n\r\n");
        out = out();
        assertTrue(out.toLowerCase().contains("\r\nconnection: close\r\n"), out);
        assertFalse(ch.isActive());
    }

    @Test
    void anIncompleteHeadIs408AfterTheHeadTimeout() throws Exception {
        send("GET /hello HTTP/1.1\r\nHost: x\r\n");
        assertEquals("", out());
        Thread.sleep(HEAD_TIMEOUT_MS + 20);
        ch.advanceTimeBy(HEAD_TIMEOUT_MS + 20, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        String out = out();
        assertEquals("408", statuses(out));
        assertFalse(ch.isActive());
    }

    @Test
    void aCompleteHeadIsNotTimedOut() throws Exception {
        send("GET /hello HTTP/1.1\r\nHost: x\r\n");
        send("\r\n");
        Thread.sleep(HEAD_TIMEOUT_MS + 20);
        ch.advanceTimeBy(HEAD_TIMEOUT_MS + 20, TimeUnit.MILLISECONDS);
        ch.runScheduledPendingTasks();
        assertEquals("200", statuses(out()));
        assertTrue(ch.isActive());
    }

    @Test
    void decodingPausesAt256AnswersOwedAndResumesWhenTheyDrain() {
        // A backend whose replies the test hands out one by one. (Not /sleep: EmbeddedChannel runs every
        // timer that is due after each operation, writes included, which a real event loop never does.)
        ArrayDeque<Backend.Reply> pending = new ArrayDeque<>();
        Backend held = new Backend() {
            @Override
            public void get(int id, EventLoop loop, Reply reply) {
                pending.add(reply);
            }

            @Override
            public void close() {
            }
        };
        ch.finishAndReleaseAll();
        ch = new EmbeddedChannel();
        ch.freezeTime();
        Main.pipeline(ch, new App(held, held, held, 1000), new Responses(ch.eventLoop()), HEAD_TIMEOUT_MS, 75_000);
        send("GET /redis?id=7 HTTP/1.1\r\nHost: x\r\n\r\n".repeat(300));
        assertEquals(256, pending.size(), "decoded up to 256 owed");
        assertFalse(ch.config().isAutoRead(), "paused");
        assertEquals("", out());
        int answered = 0;
        for (Backend.Reply r; (r = pending.poll()) != null; answered++) {
            r.done("hi".getBytes(StandardCharsets.UTF_8), null); // each answer drained lets one more request in
        }
        assertEquals(300, answered);
        assertTrue(ch.config().isAutoRead(), "resumed");
        String out = out();
        assertEquals("200 ".repeat(300).trim(), statuses(out));
        assertTrue(out.endsWith("{\"id\":7,\"message\":\"hi\"}"), out.substring(out.length() - 100));
    }
}
