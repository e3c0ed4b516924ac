package javanetty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpHeadersFactory;
import io.netty.handler.codec.http.HttpResponseEncoder;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.AsciiString;
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

    /** TEMPORARY knob (-Dresponses=raw|encoder) while the two are measured against each other. */
    final boolean encoder;
    private final EventLoop loop;
    private final ByteBuf[] full = new ByteBuf[STATUS.length];
    // Netty's HttpResponseEncoder: one header set per answer kind and Connection variant, rebuilt each second
    private static final HttpHeadersFactory HEADERS = DefaultHttpHeadersFactory.headersFactory().withValidation(false);
    private static final AsciiString SERVER_VALUE = AsciiString.cached(SERVER);
    private static final AsciiString TEXT_PLAIN = AsciiString.cached("text/plain; charset=utf-8");
    private static final AsciiString APPLICATION_JSON = AsciiString.cached("application/json");
    private static final AsciiString ALLOW = AsciiString.cached("GET, HEAD");
    private static final HttpResponseStatus[] STATUS_LINE = new HttpResponseStatus[STATUS.length];
    private static final ByteBuf[] BODY_BUF = new ByteBuf[STATUS.length];
    static {
        for (int i = 0; i < STATUS.length; i++) {
            STATUS_LINE[i] = new HttpResponseStatus(STATUS[i], REASON[i]);
            BODY_BUF[i] = Unpooled.unreleasableBuffer(Unpooled.directBuffer(BODY[i].length).writeBytes(BODY[i]).asReadOnly());
        }
    }
    private static final HttpResponseStatus JSON_OK = new HttpResponseStatus(200, "OK");
    /** [Connection variant: none, close, keep-alive][answer kind] */
    private final HttpHeaders[][] headers = new HttpHeaders[3][STATUS.length];
    /** [Connection variant][body length], built on first use in each second */
    private final HttpHeaders[][] jsonHeaders = new HttpHeaders[3][];
    private AsciiString date;
    private final int[] headLength = new int[STATUS.length];
    /** The JSON body being encoded (a message is at most 64 bytes: it never grows past its first size). */
    private final ByteBuf scratch = io.netty.buffer.Unpooled.buffer(256);
    private long second = -1;
    private byte[] dateLine;

    Responses(EventLoop loop) {
        this(loop, !"raw".equals(System.getProperty("responses", "encoder")));
    }

    Responses(EventLoop loop, boolean encoder) {
        this.loop = loop;
        this.encoder = encoder;
        refresh();
    }

    /** The pre-encoded response (GET) or its header part (HEAD); the caller owns the returned reference. */
    Object get(int which, boolean head) {
        if (encoder) return response(STATUS_LINE[which], head ? Unpooled.EMPTY_BUFFER : BODY_BUF[which].duplicate(), headers[0][which]);
        ByteBuf b = full[which];
        return head ? b.retainedSlice(0, headLength[which]) : b.retainedDuplicate();
    }

    /** A static response carrying one extra header (Connection: close / keep-alive): built on demand. */
    Object build(ByteBufAllocator alloc, int which, boolean head, byte[] extraHeader) {
        if (encoder) {
            return response(STATUS_LINE[which], head ? Unpooled.EMPTY_BUFFER : BODY_BUF[which].duplicate(),
                    headers[variant(extraHeader)][which]);
        }
        return encode(alloc, which, head, extraHeader);
    }

    private static DefaultFullHttpResponse response(HttpResponseStatus status, ByteBuf content, HttpHeaders h) {
        return new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content, h, HttpHeaders.EMPTY_HEADERS);
    }

    private static int variant(byte[] extraHeader) {
        return extraHeader == null ? 0 : extraHeader == CLOSE ? 1 : 2;
    }

    private HttpHeaders newHeaders(int variant, CharSequence contentType, int contentLength, boolean allow) {
        HttpHeaders h = HEADERS.newHeaders()
                .set(HttpHeaderNames.SERVER, SERVER_VALUE)
                .set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .set(HttpHeaderNames.CONTENT_LENGTH, AsciiString.of(Integer.toString(contentLength)));
        if (allow) h.set(HttpHeaderNames.ALLOW, ALLOW);
        h.set(HttpHeaderNames.DATE, date);
        if (variant == 1) h.set(HttpHeaderNames.CONNECTION, io.netty.handler.codec.http.HttpHeaderValues.CLOSE);
        if (variant == 2) h.set(HttpHeaderNames.CONNECTION, io.netty.handler.codec.http.HttpHeaderValues.KEEP_ALIVE);
        return h;
    }

    /**
     * 200 with {"id":N,"message":"..."}. The body is Jackson's: its UTF-8 generator escapes only '"' and
     * '\' of the stored bytes (and control characters, which no message has) and copies every other byte
     * as it is, which is the contract. It is encoded into this loop's scratch buffer first, because the
     * Content-Length header comes before it, then copied after the headers.
     */
    Object json(ByteBufAllocator alloc, int id, byte[] message, boolean head, byte[] extraHeader) {
        if (encoder) {
            ByteBuf content = alloc.directBuffer(80);
            writeJson(content, id, message);
            int length = content.readableBytes();
            if (head) {
                content.release();
                content = Unpooled.EMPTY_BUFFER;
            }
            HttpHeaders[] byLength = jsonHeaders[variant(extraHeader)];
            if (length >= byLength.length) return response(JSON_OK, content, newHeaders(variant(extraHeader), APPLICATION_JSON, length, false));
            HttpHeaders h = byLength[length];
            if (h == null) h = byLength[length] = newHeaders(variant(extraHeader), APPLICATION_JSON, length, false);
            return response(JSON_OK, content, h);
        }
        scratch.clear();
        writeJson(scratch, id, message);
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

    private static void writeJson(ByteBuf out, int id, byte[] message) {
        try (JsonGenerator g = JSON.createGenerator(new ByteBufOutputStream(out))) {
            g.writeStartObject();
            g.writeNumberProperty("id", id);
            g.writeName("message");
            g.writeUTF8String(message, 0, message.length);
            g.writeEndObject();
        }
    }

    /** Runs on the loop: re-encode when the second changes, then wake up just after the next second. */
    private void refresh() {
        long now = System.currentTimeMillis();
        long s = now / 1000;
        if (s != second) {
            second = s;
            String d = IMF_FIXDATE.format(Instant.ofEpochSecond(s));
            dateLine = ascii("Date: " + d + "\r\n")[0];
            date = AsciiString.cached(d);
            if (encoder) {
                for (int v = 0; v < 3; v++) {
                    for (int i = 0; i < STATUS.length; i++) {
                        headers[v][i] = newHeaders(v, TEXT_PLAIN, BODY[i].length, i == METHOD_NOT_ALLOWED);
                    }
                    jsonHeaders[v] = new HttpHeaders[128];
                }
            }
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

    /**
     * Netty's HttpResponseEncoder, one per connection, with the last header block it encoded kept: the
     * header sets above are shared and replaced each second, so an answer whose set is the one encoded
     * last copies its bytes instead of encoding every name and value again (as TechEmpower's netty does).
     */
    static final class Encoder extends HttpResponseEncoder {
        private HttpHeaders last;
        private ByteBuf encoded;

        @Override
        public boolean acceptOutboundMessage(Object msg) throws Exception {
            return msg.getClass() == DefaultFullHttpResponse.class || super.acceptOutboundMessage(msg);
        }

        @Override
        protected void encodeHeaders(HttpHeaders headers, ByteBuf buf) {
            if (headers == last) {
                buf.writeBytes(encoded, encoded.readerIndex(), encoded.readableBytes());
                return;
            }
            int from = buf.writerIndex();
            super.encodeHeaders(headers, buf);
            int length = buf.writerIndex() - from;
            if (encoded == null) encoded = Unpooled.buffer(length);
            encoded.clear().writeBytes(buf, from, length);
            last = headers;
        }
    }

    private static byte[][] ascii(String... s) {
        byte[][] out = new byte[s.length][];
        for (int i = 0; i < s.length; i++) out[i] = s[i].getBytes(StandardCharsets.UTF_8);
        return out;
    }
}
