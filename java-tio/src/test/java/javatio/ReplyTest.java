package javatio;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/** The encoder (Reply) and the JSON body (Greeting). */
class ReplyTest {
    private static final Reply.Kinds K = new Reply.Kinds("java-tio");
    private static final Pattern DATE = Pattern.compile("Date: [A-Z][a-z]{2}, \\d{2} [A-Z][a-z]{2} \\d{4} \\d{2}:\\d{2}:\\d{2} GMT");

    private static String encode(Reply r) {
        ByteBuffer b = r.encode();
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** The response with its Date value replaced by a fixed one. */
    private static String fixed(String s) {
        assertTrue(DATE.matcher(s).find(), s);
        return DATE.matcher(s).replaceFirst("Date: D");
    }

    @Test
    void hello() {
        assertEquals("HTTP/1.1 200 OK\r\nServer: java-tio\r\nContent-Type: text/plain; charset=utf-8\r\n"
                        + "Content-Length: 13\r\nDate: D\r\n\r\nHello, World!",
                fixed(encode(new Reply(K.text, Reply.HELLO, true, Reply.CONN_NONE))));
    }

    @Test
    void headHasTheHeadersAndNoBody() {
        assertEquals("HTTP/1.1 200 OK\r\nServer: java-tio\r\nContent-Type: text/plain; charset=utf-8\r\n"
                        + "Content-Length: 13\r\nDate: D\r\n\r\n",
                fixed(encode(new Reply(K.text, Reply.HELLO, false, Reply.CONN_NONE))));
    }

    @Test
    void connectionHeaders() {
        assertTrue(encode(new Reply(K.text, Reply.HELLO, true, Reply.CONN_KEEP_ALIVE)).contains("\r\nConnection: keep-alive\r\n\r\n"));
        String close = encode(new Reply(K.notFound, Reply.NOT_FOUND, true, Reply.CONN_CLOSE));
        assertTrue(close.startsWith("HTTP/1.1 404 Not Found\r\n"));
        assertTrue(close.endsWith("\r\nConnection: close\r\n\r\nNot Found"));
        assertFalse(encode(new Reply(K.text, Reply.HELLO, true, Reply.CONN_NONE)).contains("Connection"));
    }

    @Test
    void methodNotAllowedSaysAllow() {
        assertTrue(encode(new Reply(K.notAllowed, Reply.NOT_ALLOWED, true, Reply.CONN_NONE))
                .contains("\r\nAllow: GET, HEAD\r\n"));
    }

    @Test
    void encodesIntoAPooledBuffer() {
        Reply r = new Reply(K.text, Reply.HELLO, true, Reply.CONN_NONE);
        ByteBuffer pooled = r.encode(TioInternals::writeBuffer);
        assertTrue(pooled.capacity() >= pooled.remaining());
        byte[] bytes = new byte[pooled.remaining()];
        pooled.get(bytes);
        assertEquals(fixed(encode(r)), fixed(new String(bytes, StandardCharsets.UTF_8)));
    }

    @Test
    void aWrittenBufferIsReusedByThePool() {
        // what t-io does with a buffer once written (WriteCompletionHandler): it is queued, and freed only by
        // being handed out again; writeBuffer must take from that queue or the queue grows without bound
        ByteBuffer first = TioInternals.writeBuffer(200);
        com.litongjava.tio.core.pool.BufferPoolUtils.clean(first);
        assertSame(first, TioInternals.writeBuffer(300));
    }

    @Test
    void refusalsClose() {
        int[][] cases = {{400, 400}, {408, 408}, {414, 414}, {431, 431}, {501, 501}, {505, 505}};
        for (int[] c : cases) {
            Reply r = K.refusal(c[0]);
            assertTrue(r.closeAfter());
            assertTrue(encode(r).startsWith("HTTP/1.1 " + c[1] + " "), encode(r));
        }
    }

    @Test
    void contentLengthCountsBytesNotChars() {
        byte[] body = Greeting.json(1, "こんにちは".getBytes(StandardCharsets.UTF_8));
        String s = encode(new Reply(K.json, body, true, Reply.CONN_NONE));
        assertTrue(s.contains("Content-Type: application/json\r\nContent-Length: " + body.length + "\r\n"), s);
    }

    /** Every greeting of the seed data: the JSON is {"id":N,"message":"..."} escaping only '"' and '\'. */
    @Test
    void everyGreetingByteForByte() throws IOException {
        List<String> lines = Files.readAllLines(Path.of("../shared-schema/greetings.tsv"), StandardCharsets.UTF_8);
        assertEquals(10_000, lines.size());
        for (String line : lines) {
            int tab = line.indexOf('\t');
            int id = Integer.parseInt(line.substring(0, tab));
            String message = line.substring(tab + 1);
            for (char ch : message.toCharArray()) {
                assertTrue(ch >= 0x20, "no control characters in the seed data");
            }
            String expected = "{\"id\":" + id + ",\"message\":\""
                    + message.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
            assertArrayEquals(expected.getBytes(StandardCharsets.UTF_8),
                    Greeting.json(id, message.getBytes(StandardCharsets.UTF_8)), "id " + id);
        }
    }
}
