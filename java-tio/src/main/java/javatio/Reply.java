package javatio;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.IntFunction;

import com.litongjava.aio.Packet;

/**
 * One response. The status line and the constant headers are prebuilt per kind; Content-Length,
 * Date and Connection are added when t-io encodes the packet. HEAD gets the same headers, no body.
 */
// Workaround: t-io's HTTP encoder always writes "Server: t-io" (README, Workarounds)
final class Reply extends Packet {
    private static final long serialVersionUID = 1L;

    static final int CONN_NONE = 0, CONN_KEEP_ALIVE = 1, CONN_CLOSE = 2;

    /** The constant part of a response: status line, Server, Content-Type (and Allow on 405). */
    static final class Kind {
        final byte[] head;

        Kind(String server, String statusLine, String contentType, String extra) {
            this.head = (statusLine + "\r\nServer: " + server + "\r\n" + extra + "Content-Type: " + contentType
                    + "\r\nContent-Length: ").getBytes(StandardCharsets.US_ASCII);
        }
    }

    static final class Kinds {
        final Kind text, json, badRequest, notFound, notAllowed, error, unavailable;
        final Kind requestTimeout, uriTooLong, headerTooLarge, notImplemented, versionNotSupported;

        Kinds(String server) {
            String text = "text/plain; charset=utf-8";
            this.text = new Kind(server, "HTTP/1.1 200 OK", text, "");
            this.json = new Kind(server, "HTTP/1.1 200 OK", "application/json", "");
            this.badRequest = new Kind(server, "HTTP/1.1 400 Bad Request", text, "");
            this.notFound = new Kind(server, "HTTP/1.1 404 Not Found", text, "");
            this.notAllowed = new Kind(server, "HTTP/1.1 405 Method Not Allowed", text, "Allow: GET, HEAD\r\n");
            this.error = new Kind(server, "HTTP/1.1 500 Internal Server Error", text, "");
            this.unavailable = new Kind(server, "HTTP/1.1 503 Service Unavailable", text, "");
            this.requestTimeout = new Kind(server, "HTTP/1.1 408 Request Timeout", text, "");
            this.uriTooLong = new Kind(server, "HTTP/1.1 414 URI Too Long", text, "");
            this.headerTooLarge = new Kind(server, "HTTP/1.1 431 Request Header Fields Too Large", text, "");
            this.notImplemented = new Kind(server, "HTTP/1.1 501 Not Implemented", text, "");
            this.versionNotSupported = new Kind(server, "HTTP/1.1 505 HTTP Version Not Supported", text, "");
        }

        /** The answer to a request refused while decoding (Request.refusal): always "Connection: close". */
        Reply refusal(int status) {
            return switch (status) {
                case 408 -> new Reply(requestTimeout, REQUEST_TIMEOUT, true, CONN_CLOSE);
                case 414 -> new Reply(uriTooLong, URI_TOO_LONG, true, CONN_CLOSE);
                case 431 -> new Reply(headerTooLarge, HEADER_TOO_LARGE, true, CONN_CLOSE);
                case 501 -> new Reply(notImplemented, NOT_IMPLEMENTED, true, CONN_CLOSE);
                case 505 -> new Reply(versionNotSupported, VERSION_NOT_SUPPORTED, true, CONN_CLOSE);
                default -> new Reply(badRequest, BAD_REQUEST, true, CONN_CLOSE);
            };
        }
    }

    static final byte[] HELLO = ascii("Hello, World!");
    static final byte[] SLEPT = ascii("Slept 10 ms");
    static final byte[] BAD_REQUEST = ascii("Bad Request");
    static final byte[] NOT_FOUND = ascii("Not Found");
    static final byte[] NOT_ALLOWED = ascii("Method Not Allowed");
    static final byte[] ERROR = ascii("Internal Server Error");
    static final byte[] UNAVAILABLE = ascii("Service Unavailable");
    static final byte[] REQUEST_TIMEOUT = ascii("Request Timeout");
    static final byte[] URI_TOO_LONG = ascii("URI Too Long");
    static final byte[] HEADER_TOO_LARGE = ascii("Request Header Fields Too Large");
    static final byte[] NOT_IMPLEMENTED = ascii("Not Implemented");
    static final byte[] VERSION_NOT_SUPPORTED = ascii("HTTP Version Not Supported");

    private static final byte[] DATE = ascii("\r\nDate: ");
    private static final byte[] CRLF = ascii("\r\n");
    private static final byte[] KEEP_ALIVE = ascii("Connection: keep-alive\r\n");
    private static final byte[] CLOSE = ascii("Connection: close\r\n");

    final Kind kind;
    final byte[] body;
    final boolean withBody;
    final int connection;

    Reply(Kind kind, byte[] body, boolean withBody, int connection) {
        this.kind = kind;
        this.body = body;
        this.withBody = withBody;
        this.connection = connection;
    }

    boolean closeAfter() {
        return connection == CONN_CLOSE;
    }

    ByteBuffer encode() {
        return encode(ByteBuffer::allocate);
    }

    /** The response's bytes in a buffer of at least their size from {@code allocate}, flipped for reading. */
    ByteBuffer encode(IntFunction<ByteBuffer> allocate) {
        byte[] length = Integer.toString(body.length).getBytes(StandardCharsets.US_ASCII);
        byte[] date = HttpDate.now();
        byte[] conn = connection == CONN_CLOSE ? CLOSE : connection == CONN_KEEP_ALIVE ? KEEP_ALIVE : null;
        int size = kind.head.length + length.length + DATE.length + date.length + 2 + (conn == null ? 0 : conn.length)
                + 2 + (withBody ? body.length : 0);
        ByteBuffer b = allocate.apply(size);
        b.put(kind.head).put(length).put(DATE).put(date).put(CRLF);
        if (conn != null) {
            b.put(conn);
        }
        b.put(CRLF);
        if (withBody) {
            b.put(body);
        }
        b.flip();
        return b;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }
}
