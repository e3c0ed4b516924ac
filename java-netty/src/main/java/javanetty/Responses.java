package javanetty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufOutputStream;
import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpHeadersFactory;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
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
 * The responses of one event loop, as {@link FullHttpResponse}s for Netty's {@link HttpResponseEncoder}
 * ({@link Encoder}). Their header sets are built once per second (when the Date changes) and shared by
 * every answer of that kind, so the encoder can copy a set's bytes instead of encoding it again. Only
 * this loop's thread touches an instance.
 */
final class Responses {
    static final String SERVER = "java-netty";
    private static final DateTimeFormatter IMF_FIXDATE =
            DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

    static final int OK = 0, BAD_REQUEST = 1, NOT_FOUND = 2, METHOD_NOT_ALLOWED = 3, INTERNAL_ERROR = 4,
            UNAVAILABLE = 5, SLEPT = 6, REQUEST_TIMEOUT = 7, URI_TOO_LONG = 8, HEADER_FIELDS_TOO_LARGE = 9,
            NOT_IMPLEMENTED = 10, VERSION_NOT_SUPPORTED = 11;
    private static final int[] STATUS = {200, 400, 404, 405, 500, 503, 200, 408, 414, 431, 501, 505};
    private static final String[] REASON = {"OK", "Bad Request", "Not Found", "Method Not Allowed",
            "Internal Server Error", "Service Unavailable", "OK", "Request Timeout", "URI Too Long",
            "Request Header Fields Too Large", "Not Implemented", "HTTP Version Not Supported"};
    private static final String[] BODY = {"Hello, World!", "Bad Request", "Not Found", "Method Not Allowed",
            "Internal Server Error", "Service Unavailable", "Slept 10 ms", "Request Timeout", "URI Too Long",
            "Request Header Fields Too Large", "Not Implemented", "HTTP Version Not Supported"};

    /** The Connection header an answer carries: none, close, or keep-alive (an HTTP/1.0 client that asked). */
    static final int KEEP = 0, CLOSE = 1, KEEP_ALIVE = 2;

    private static final HttpHeadersFactory HEADERS = DefaultHttpHeadersFactory.headersFactory().withValidation(false);
    private static final AsciiString SERVER_VALUE = AsciiString.cached(SERVER);
    private static final AsciiString TEXT_PLAIN = AsciiString.cached("text/plain; charset=utf-8");
    private static final AsciiString APPLICATION_JSON = AsciiString.cached("application/json");
    private static final AsciiString ALLOW = AsciiString.cached("GET, HEAD");
    private static final HttpResponseStatus[] STATUS_LINE = new HttpResponseStatus[STATUS.length];
    /** The bodies, read-only and never released; each answer carries a duplicate. */
    private static final ByteBuf[] BODY_BUF = new ByteBuf[STATUS.length];

    static {
        for (int i = 0; i < STATUS.length; i++) {
            STATUS_LINE[i] = new HttpResponseStatus(STATUS[i], REASON[i]);
            byte[] b = BODY[i].getBytes(StandardCharsets.US_ASCII);
            BODY_BUF[i] = Unpooled.unreleasableBuffer(Unpooled.directBuffer(b.length).writeBytes(b).asReadOnly());
        }
    }

    /** Jackson's defaults, stated: no pretty printer, non-ASCII and '/' written as they are. */
    private static final JsonFactory JSON = JsonFactory.builder()
            .disable(JsonWriteFeature.ESCAPE_NON_ASCII)
            .disable(JsonWriteFeature.ESCAPE_FORWARD_SLASHES)
            .build();
    /** The largest JSON body whose header set is kept (a message is at most 64 bytes: the body under 128). */
    private static final int MAX_CACHED_JSON = 128;

    private final EventLoop loop;
    /** [Connection header][answer kind], replaced each second. */
    private final HttpHeaders[][] headers = new HttpHeaders[3][STATUS.length];
    /** [Connection header][JSON body length], built on first use in each second. */
    private final HttpHeaders[][] jsonHeaders = new HttpHeaders[3][MAX_CACHED_JSON];
    private long second = -1;
    private AsciiString date;

    Responses(EventLoop loop) {
        this.loop = loop;
        refresh();
    }

    /** A static answer (the body left out for HEAD, its Content-Length kept); the caller owns it. */
    FullHttpResponse get(int which, boolean head, int connection) {
        return response(STATUS_LINE[which], head ? Unpooled.EMPTY_BUFFER : BODY_BUF[which].duplicate(),
                headers[connection][which]);
    }

    /**
     * 200 with {"id":N,"message":"..."}. The body is Jackson's: its UTF-8 generator escapes only '"' and
     * '\' of the stored bytes (and control characters, which no message has) and copies every other byte
     * as it is, which is the contract.
     */
    FullHttpResponse json(ByteBufAllocator alloc, int id, byte[] message, boolean head, int connection) {
        ByteBuf content = alloc.directBuffer(96);
        try (JsonGenerator g = JSON.createGenerator(new ByteBufOutputStream(content))) {
            g.writeStartObject();
            g.writeNumberProperty("id", id);
            g.writeName("message");
            g.writeUTF8String(message, 0, message.length);
            g.writeEndObject();
        }
        int length = content.readableBytes();
        if (head) {
            content.release();
            content = Unpooled.EMPTY_BUFFER;
        }
        HttpHeaders h;
        if (length < MAX_CACHED_JSON) {
            h = jsonHeaders[connection][length];
            if (h == null) h = jsonHeaders[connection][length] = newHeaders(connection, APPLICATION_JSON, length, false);
        } else {
            h = newHeaders(connection, APPLICATION_JSON, length, false);
        }
        return response(HttpResponseStatus.OK, content, h);
    }

    private static FullHttpResponse response(HttpResponseStatus status, ByteBuf content, HttpHeaders h) {
        return new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status, content, h, HttpHeaders.EMPTY_HEADERS);
    }

    private HttpHeaders newHeaders(int connection, CharSequence contentType, int contentLength, boolean allow) {
        HttpHeaders h = HEADERS.newHeaders()
                .set(HttpHeaderNames.SERVER, SERVER_VALUE)
                .set(HttpHeaderNames.CONTENT_TYPE, contentType)
                .set(HttpHeaderNames.CONTENT_LENGTH, AsciiString.of(Integer.toString(contentLength)))
                .set(HttpHeaderNames.DATE, date);
        if (allow) h.set(HttpHeaderNames.ALLOW, ALLOW);
        if (connection == CLOSE) h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.CLOSE);
        if (connection == KEEP_ALIVE) h.set(HttpHeaderNames.CONNECTION, HttpHeaderValues.KEEP_ALIVE);
        return h;
    }

    /** Runs on the loop: new header sets when the second changes, then wake up just after the next second. */
    private void refresh() {
        long now = System.currentTimeMillis();
        long s = now / 1000;
        if (s != second) {
            second = s;
            date = AsciiString.cached(IMF_FIXDATE.format(Instant.ofEpochSecond(s)));
            for (int c = 0; c < 3; c++) {
                for (int i = 0; i < STATUS.length; i++) {
                    headers[c][i] = newHeaders(c, TEXT_PLAIN, BODY[i].length(), i == METHOD_NOT_ALLOWED);
                }
                java.util.Arrays.fill(jsonHeaders[c], null);
            }
        }
        loop.schedule(this::refresh, 1000 - now % 1000 + 1, TimeUnit.MILLISECONDS);
    }

    /**
     * Netty's HttpResponseEncoder, one per connection, keeping the last header block it encoded: the
     * header sets above are shared and replaced each second, so an answer whose set is the one encoded
     * last copies those bytes instead of encoding every name and value again (as TechEmpower's netty does).
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

        @Override
        public void handlerRemoved(io.netty.channel.ChannelHandlerContext ctx) throws Exception {
            last = null;
            encoded = null; // a heap buffer: the garbage collector takes it
            super.handlerRemoved(ctx);
        }
    }
}
