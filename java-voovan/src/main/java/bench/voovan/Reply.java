package bench.voovan;

import org.voovan.http.server.context.WebContext;
import tools.jackson.core.JsonGenerator;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.json.JsonWriteFeature;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * One response: status, Content-Type, body bytes. Canned ones are built once.
 *
 * GET answers are written through Voovan's own HttpResponse (status, one Content-Type header, body;
 * Voovan adds Content-Length, Date and Server itself). HEAD answers cannot be: Voovan's Response
 * always derives Content-Length from the body it writes, so a HEAD answer with the GET's length and
 * no body has to be written as bytes (see headBytes) with the very same header values.
 */
public final class Reply {
    public static final String TEXT = "text/plain; charset=utf-8";
    static final String JSON = "application/json";

    public final int status;
    public final String reason;
    public final String contentType;
    public final byte[] body;
    public final boolean allow;
    private final byte[] headPrefix;

    Reply(int status, String reason, String contentType, byte[] body) {
        this.status = status;
        this.reason = reason;
        this.contentType = contentType;
        this.body = body;
        this.allow = status == 405;
        String head = "HTTP/1.1 " + status + " " + reason + "\r\n"
                + "Content-Type: " + contentType + "\r\n"
                + "Content-Length: " + body.length + "\r\n"
                + (allow ? "Allow: GET, HEAD\r\n" : "");
        this.headPrefix = head.getBytes(StandardCharsets.US_ASCII);
    }

    static Reply text(int status, String reason, String body) {
        return new Reply(status, reason, TEXT, body.getBytes(StandardCharsets.UTF_8));
    }

    public static final Reply HELLO = text(200, "OK", "Hello, World!");
    public static final Reply SLEPT = text(200, "OK", "Slept 10 ms");
    public static final Reply BAD_REQUEST = text(400, "Bad Request", "Bad Request");
    public static final Reply NOT_FOUND = text(404, "Not Found", "Not Found");
    public static final Reply METHOD_NOT_ALLOWED = text(405, "Method Not Allowed", "Method Not Allowed");
    public static final Reply INTERNAL_ERROR = text(500, "Internal Server Error", "Internal Server Error");
    public static final Reply UNAVAILABLE = text(503, "Service Unavailable", "Service Unavailable");
    // refusals (HeadGuard, Conn): written as bytes, then the connection ends
    public static final Reply REQUEST_TIMEOUT = text(408, "Request Timeout", "Request Timeout");
    public static final Reply URI_TOO_LONG = text(414, "URI Too Long", "URI Too Long");
    public static final Reply HEADERS_TOO_LARGE = text(431, "Request Header Fields Too Large", "Request Header Fields Too Large");
    public static final Reply NOT_IMPLEMENTED = text(501, "Not Implemented", "Not Implemented");
    public static final Reply VERSION_NOT_SUPPORTED = text(505, "HTTP Version Not Supported", "HTTP Version Not Supported");

    /** Jackson's defaults, stated: no pretty printer, non-ASCII and '/' written as they are. */
    private static final JsonFactory JSON_FACTORY = JsonFactory.builder()
            .disable(JsonWriteFeature.ESCAPE_NON_ASCII)
            .disable(JsonWriteFeature.ESCAPE_FORWARD_SLASHES)
            .build();
    private static final byte[] KEEP_ALIVE = "Connection: keep-alive\r\n".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLOSE = "Connection: close\r\n".getBytes(StandardCharsets.US_ASCII);

    /**
     * {"id":N,"message":"..."} by Jackson's UTF-8 generator: it escapes '"' and '\' of the stored bytes
     * (and control characters, which no message has) and copies every other byte as it is, which is the
     * contract. Voovan's own JSON (org.voovan.tools.json) does not give these bytes (README,
     * Workarounds).
     */
    public static Reply json(int id, byte[] message) {
        // Workaround: Voovan's JSON encoder, not used (README, Workarounds)
        ByteArrayOutputStream out = new ByteArrayOutputStream(message.length + 32);
        try (JsonGenerator g = JSON_FACTORY.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberProperty("id", id);
            g.writeName("message");
            g.writeUTF8String(message, 0, message.length);
            g.writeEndObject();
        }
        return new Reply(200, "OK", JSON, out.toByteArray());
    }

    /**
     * The whole HEAD answer: the same status line and headers as the GET, Date and Server taken from
     * the very bytes Voovan appends to its own responses (WebContext.RESPONSE_COMMON_HEADER, which ends
     * the header block), and no body. "Connection: keep-alive" for an HTTP/1.0 keep-alive request,
     * "Connection: close" when the connection ends after it.
     */
    public byte[] headBytes(boolean http10KeepAlive, boolean keepAlive, byte[] commonHeader) {
        byte[] connection = !keepAlive ? CLOSE : http10KeepAlive ? KEEP_ALIVE : null;
        return connection == null ? concat(headPrefix, commonHeader) : concat(headPrefix, connection, commonHeader);
    }

    /** A refusal: the whole answer with its body, saying "Connection: close". */
    public byte[] refusalBytes() {
        return concat(headPrefix, CLOSE, WebContext.RESPONSE_COMMON_HEADER, body);
    }

    private static byte[] concat(byte[]... parts) {
        int length = 0;
        for (byte[] part : parts) length += part.length;
        byte[] out = new byte[length];
        int p = 0;
        for (byte[] part : parts) {
            System.arraycopy(part, 0, out, p, part.length);
            p += part.length;
        }
        return out;
    }
}
