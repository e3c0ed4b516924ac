package javanetty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.channel.EventLoop;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.json.JsonWriteFeature;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * The responses of one event loop. Static responses (hello, sleep, every error) are encoded whole,
 * status line + headers + body, once per second when the Date changes; a request then costs one
 * retainedDuplicate() of a direct buffer. Only this loop's thread touches an instance, so refreshing
 * never races with a write (a buffer still queued for a slow client keeps its own reference).
 */
final class Responses {
    static final String SERVER = "java-netty";
    private static final DateTimeFormatter IMF_FIXDATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

    static final int OK = 0, BAD_REQUEST = 1, NOT_FOUND = 2, METHOD_NOT_ALLOWED = 3, INTERNAL_ERROR = 4,
            UNAVAILABLE = 5, SLEPT = 6, REQUEST_TIMEOUT = 7, URI_TOO_LONG = 8, HEADER_FIELDS_TOO_LARGE = 9;
    private static final int[] STATUS = {200, 400, 404, 405, 500, 503, 200, 408, 414, 431};
    private static final String[] REASON = {"OK", "Bad Request", "Not Found", "Method Not Allowed",
            "Internal Server Error", "Service Unavailable", "OK", "Request Timeout", "URI Too Long",
            "Request Header Fields Too Large"};
    private static final byte[][] BODY = ascii("Hello, World!", "Bad Request", "Not Found", "Method Not Allowed",
            "Internal Server Error", "Service Unavailable", "Slept 10 ms", "Request Timeout", "URI Too Long",
            "Request Header Fields Too Large");

    private static final byte[] JSON_HEAD = ascii("HTTP/1.1 200 OK\r\nServer: " + SERVER
            + "\r\nContent-Type: application/json\r\nContent-Length: ")[0];
    private static final byte[] CRLF = {'\r', '\n'};
    /** Jackson's defaults, stated: no pretty printer, non-ASCII and '/' written as they are. */
    private static final JsonFactory JSON = JsonFactory.builder()
            .disable(JsonWriteFeature.ESCAPE_NON_ASCII)
            .disable(JsonWriteFeature.ESCAPE_FORWARD_SLASHES)
            .build();
    static final byte[] KEEP_ALIVE = ascii("Connection: keep-alive\r\n")[0];
    static final byte[] CLOSE = ascii("Connection: close\r\n")[0];

    private final EventLoop loop;
    private final ByteBuf[] full = new ByteBuf[STATUS.length];
    private final int[] headLength = new int[STATUS.length];
    /** The JSON body being encoded (a message is at most 64 bytes: it never grows past its first size). */
    private final ByteBuf scratch = io.netty.buffer.Unpooled.buffer(256);
    private long second = -1;
    private byte[] dateLine;

    Responses(EventLoop loop) {
        this.loop = loop;
        refresh();
    }

    /** The pre-encoded response (GET) or its header part (HEAD); the caller owns the returned reference. */
    ByteBuf get(int which, boolean head) {
        ByteBuf b = full[which];
        return head ? b.retainedSlice(0, headLength[which]) : b.retainedDuplicate();
    }

    /** A static response carrying one extra header (Connection: close / keep-alive): built on demand. */
    ByteBuf build(ByteBufAllocator alloc, int which, boolean head, byte[] extraHeader) {
        return encode(alloc, which, head, extraHeader);
    }

    /**
     * 200 with {"id":N,"message":"..."}. The body is Jackson's: its UTF-8 generator escapes only '"' and
     * '\' of the stored bytes (and control characters, which no message has) and copies every other byte
     * as it is, which is the contract. It is encoded into this loop's scratch buffer first, because the
     * Content-Length header comes before it, then copied after the headers.
     */
    ByteBuf json(ByteBufAllocator alloc, int id, byte[] message, boolean head, byte[] extraHeader) {
        scratch.clear();
        try (JsonGenerator g = JSON.createGenerator(new ByteBufOutputStream(scratch))) {
            g.writeStartObject();
            g.writeNumberProperty("id", id);
            g.writeName("message");
            g.writeUTF8String(message, 0, message.length);
            g.writeEndObject();
        }
        int bodyLength = scratch.readableBytes();
        int size = JSON_HEAD.length + 10 + CRLF.length + dateLine.length
                + (extraHeader == null ? 0 : extraHeader.length) + CRLF.length + (head ? 0 : bodyLength);
        ByteBuf b = alloc.directBuffer(size);
        b.writeBytes(JSON_HEAD);
        writeInt(b, bodyLength, digits(bodyLength));
        b.writeBytes(CRLF).writeBytes(dateLine);
        if (extraHeader != null) b.writeBytes(extraHeader);
        b.writeBytes(CRLF);
        if (!head) b.writeBytes(scratch);
        return b;
    }

    /** Runs on the loop: re-encode when the second changes, then wake up just after the next second. */
    private void refresh() {
        long now = System.currentTimeMillis();
        long s = now / 1000;
        if (s != second) {
            second = s;
            dateLine = ascii("Date: " + IMF_FIXDATE.format(Instant.ofEpochSecond(s)) + "\r\n")[0];
            for (int i = 0; i < STATUS.length; i++) {
                ByteBuf old = full[i];
                ByteBuf b = encode(io.netty.buffer.UnpooledByteBufAllocator.DEFAULT, i, false, null);
                headLength[i] = b.readableBytes() - BODY[i].length;
                full[i] = b;
                if (old != null) old.release();
            }
        }
        loop.schedule(this::refresh, 1000 - now % 1000 + 1, TimeUnit.MILLISECONDS);
    }

    private ByteBuf encode(ByteBufAllocator alloc, int which, boolean head, byte[] extraHeader) {
        StringBuilder h = new StringBuilder(160)
                .append("HTTP/1.1 ").append(STATUS[which]).append(' ').append(REASON[which]).append("\r\n")
                .append("Server: ").append(SERVER).append("\r\n")
                .append("Content-Type: text/plain; charset=utf-8\r\n")
                .append("Content-Length: ").append(BODY[which].length).append("\r\n");
        if (which == METHOD_NOT_ALLOWED) h.append("Allow: GET, HEAD\r\n");
        byte[] headBytes = h.toString().getBytes(StandardCharsets.US_ASCII);
        ByteBuf b = alloc.directBuffer(headBytes.length + dateLine.length + 64 + BODY[which].length);
        b.writeBytes(headBytes).writeBytes(dateLine);
        if (extraHeader != null) b.writeBytes(extraHeader);
        b.writeBytes(CRLF);
        if (!head) b.writeBytes(BODY[which]);
        return b;
    }

    private static int digits(int v) {
        int n = 1;
        while (v >= 10) { v /= 10; n++; }
        return n;
    }

    private static void writeInt(ByteBuf b, int v, int digits) {
        int at = b.writerIndex();
        b.writerIndex(at + digits);
        for (int i = at + digits - 1; i >= at; i--) {
            b.setByte(i, '0' + v % 10);
            v /= 10;
        }
    }

    private static byte[][] ascii(String... s) {
        byte[][] out = new byte[s.length][];
        for (int i = 0; i < s.length; i++) out[i] = s[i].getBytes(StandardCharsets.UTF_8);
        return out;
    }
}
