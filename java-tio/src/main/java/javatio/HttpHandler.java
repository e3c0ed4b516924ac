package javatio;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tio.core.ChannelContext;
import org.tio.core.TioConfig;
import org.tio.core.intf.Packet;
import org.tio.server.intf.TioServerHandler;

/**
 * t-io's three callbacks: decode (bytes -> Request: HTTP/1.1 request line and header fields, with the
 * contract's limits and framing rules), handler (Request -> Reply), encode (Reply -> bytes).
 *
 * <p>Where this runs: decode on the t-io group thread that completed the read (the AIO completion
 * handler); handler on a t-io worker (PacketHandlerMode.QUEUE, one at a time per connection). The
 * handler never blocks: /sleep reserves its place in the connection's reply order and a timer thread
 * sends the reply 10 ms later through Tio.send; a data request does the same from the store's
 * completion (Lettuce's event loop for Redis, a virtual thread for the blocking drivers).
 */
final class HttpHandler implements TioServerHandler {
    private static final Logger log = LoggerFactory.getLogger(HttpHandler.class);
    private static final int HELLO = 0, SLEEP = 1, REDIS = 2, MYSQL = 3, MEMCACHE = 4;
    private static final Map<String, Integer> ROUTES = new HashMap<>();

    static {
        ROUTES.put("/hello", HELLO);
        ROUTES.put("/sleep", SLEEP);
        ROUTES.put("/redis", REDIS);
        ROUTES.put("/mysql", MYSQL);
        ROUTES.put("/memcache", MEMCACHE);
    }

    private final Reply.Kinds k;
    private final Store[] stores = new Store[5];
    private final long timeoutNanos;
    private final ScheduledExecutorService timer;

    HttpHandler(Reply.Kinds kinds, Store redis, Store mysql, Store memcache, int timeoutMs,
                ScheduledExecutorService timer) {
        this.k = kinds;
        stores[REDIS] = redis;
        stores[MYSQL] = mysql;
        stores[MEMCACHE] = memcache;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        this.timer = timer;
    }

    // ------------------------------------------------------------------ decode

    /** Longest request line (without its CRLF) served; longer: 414. */
    static final int MAX_LINE = 8192;
    /** Longest head (request line + header lines + empty line, CRLFs included) served; longer: 431. */
    static final int MAX_HEAD = 16384;
    /** Longest request body read (and discarded); a longer one is left unread and the connection closed. */
    static final int MAX_BODY = 64 * 1024;

    /** RFC 9110 tchar: the bytes allowed in a method and a field name. */
    private static final boolean[] TCHAR = new boolean[256];

    static {
        for (char ch = '0'; ch <= '9'; ch++) TCHAR[ch] = true;
        for (char ch = 'a'; ch <= 'z'; ch++) TCHAR[ch] = true;
        for (char ch = 'A'; ch <= 'Z'; ch++) TCHAR[ch] = true;
        for (char ch : "!#$%&'*+-.^_`|~".toCharArray()) TCHAR[ch] = true;
    }

    private static final byte[] CONTENT_LENGTH = "content-length".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRANSFER_ENCODING = "transfer-encoding".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONNECTION = "connection".getBytes(StandardCharsets.US_ASCII);

    /**
     * t-io's TioServerHandler.decode: one request from the bytes t-io has buffered for the connection, null
     * while it is incomplete (t-io keeps the bytes and calls again when more arrive). A request the
     * contract refuses becomes a Request carrying the refusal's status; it is answered in order, then the
     * connection is closed, and nothing after it is read.
     *
     * <p>Why not t-io's HttpRequestDecoder (tio-http-common 3.8.6): see README, Workarounds. In short, its line limits are compile-time constants of 2,048 bytes (a 4 KB cookie closes the
     * connection unanswered), and it accepts conflicting Content-Lengths and "Host : x".
     */
    // Workaround: t-io's HTTP decoder has 2,048-byte line limits and no framing checks (README, Workarounds)
    @Override
    public Packet decode(ByteBuffer buffer, int limit, int position, int readableLength, ChannelContext ctx) {
        Conn c = Conn.of(ctx);
        if (c.done) {
            return null; // nothing after a closing request is read; the bytes stay until the close
        }
        Request r = parse(buffer, buffer.position(), limit, ctx);
        if (r == null) {
            c.incomplete();
            return null;
        }
        c.decoded(r.refusal != 0 || !r.keepAlive);
        return r;
    }

    private static Request refuse(ByteBuffer b, int limit, int status) {
        b.position(limit);
        return Request.refusal(status);
    }

    private Request parse(ByteBuffer b, int p, int limit, ChannelContext ctx) {
        // request line: METHOD SP request-target SP HTTP-version
        int lf = indexOfLf(b, p, Math.min(limit, p + MAX_LINE + 2));
        if (lf < 0) {
            return limit - p >= MAX_LINE + 2 ? refuse(b, limit, 414) : null;
        }
        int eol = lf > p && b.get(lf - 1) == '\r' ? lf - 1 : lf;
        if (eol - p > MAX_LINE) {
            return refuse(b, limit, 414);
        }
        int sp1 = p;
        while (sp1 < eol && TCHAR[b.get(sp1) & 0xff]) {
            sp1++;
        }
        int sp2 = sp1 + 1;
        while (sp2 < eol && (b.get(sp2) & 0xff) > 0x20 && b.get(sp2) != 0x7f) {
            sp2++;
        }
        if (sp1 == p || sp1 >= eol || b.get(sp1) != ' ' || sp2 == sp1 + 1 || sp2 >= eol || b.get(sp2) != ' '
                || eol - sp2 - 1 != 8 || !startsWith(b, sp2 + 1, "HTTP/1.")) {
            return refuse(b, limit, 400);
        }
        byte minor = b.get(eol - 1);
        if (minor < '0' || minor > '9') {
            return refuse(b, limit, 400);
        }
        boolean http10 = minor == '0';

        // header fields
        long contentLength = -1;
        boolean chunked = false, close = false, keepAlive = false;
        int line = lf + 1;
        int end;
        while (true) {
            int nl = indexOfLf(b, line, Math.min(limit, p + MAX_HEAD));
            if (nl < 0) {
                return limit - p >= MAX_HEAD ? refuse(b, limit, 431) : null;
            }
            int e = nl > line && b.get(nl - 1) == '\r' ? nl - 1 : nl;
            if (e == line) {
                end = nl + 1; // the empty line: end of the head
                break;
            }
            // field-name ":" OWS field-value OWS; the name is tchar only: no whitespace before the colon,
            // no space, tab, control or other delimiter in it (a line starting with whitespace, the
            // obsolete line folding, is refused the same way)
            int colon = line;
            while (colon < e && TCHAR[b.get(colon) & 0xff]) {
                colon++;
            }
            if (colon == line || colon == e || b.get(colon) != ':') {
                return refuse(b, limit, 400);
            }
            int vs = colon + 1, ve = e;
            for (int i = vs; i < ve; i++) {
                byte v = b.get(i);
                if (v == '\r' || v == 0) {
                    return refuse(b, limit, 400); // RFC 9110 5.5: CR and NUL are never part of a value
                }
            }
            while (vs < ve && (b.get(vs) == ' ' || b.get(vs) == '\t')) {
                vs++;
            }
            while (ve > vs && (b.get(ve - 1) == ' ' || b.get(ve - 1) == '\t')) {
                ve--;
            }
            if (nameIs(b, line, colon, CONTENT_LENGTH)) {
                long n = contentLength(b, vs, ve);
                if (n < 0 || (contentLength >= 0 && n != contentLength)) {
                    return refuse(b, limit, 400); // not a number, or two different lengths
                }
                contentLength = n;
            } else if (nameIs(b, line, colon, TRANSFER_ENCODING)) {
                chunked = true; // any transfer coding: the body is not read, the connection closes
            } else if (nameIs(b, line, colon, CONNECTION)) {
                String v = ascii(b, vs, ve);
                close |= hasToken(v, "close");
                keepAlive |= hasToken(v, "keep-alive");
            }
            line = nl + 1;
        }
        if (chunked && contentLength >= 0) {
            return refuse(b, limit, 400); // RFC 9112 6.3: Transfer-Encoding with Content-Length
        }

        // body: read and discarded up to MAX_BODY; otherwise answered, then the connection is closed
        boolean unreadBody = chunked || contentLength > MAX_BODY;
        if (contentLength > 0 && !unreadBody) {
            if (limit - end < contentLength) {
                ctx.setPacketNeededLength((int) (end - p + contentLength));
                return null;
            }
            end += (int) contentLength;
        }
        b.position(unreadBody ? limit : end);

        int method = sp1 - p == 3 && startsWith(b, p, "GET") ? Request.GET
                : sp1 - p == 4 && startsWith(b, p, "HEAD") ? Request.HEAD : Request.OTHER;
        String target = ascii(b, sp1 + 1, sp2);
        int q = target.indexOf('?');
        boolean persistent = !unreadBody && (http10 ? keepAlive && !close : !close);
        return new Request(method, q < 0 ? target : target.substring(0, q), q < 0 ? "" : target.substring(q + 1),
                persistent, http10);
    }

    private static int indexOfLf(ByteBuffer b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b.get(i) == '\n') {
                return i;
            }
        }
        return -1;
    }

    private static boolean startsWith(ByteBuffer b, int at, String s) {
        for (int i = 0; i < s.length(); i++) {
            if (b.get(at + i) != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Case-insensitive name match; lowerName is lower case. */
    private static boolean nameIs(ByteBuffer b, int from, int to, byte[] lowerName) {
        if (to - from != lowerName.length) {
            return false;
        }
        for (int i = 0; i < lowerName.length; i++) {
            if ((b.get(from + i) | 0x20) != lowerName[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * A Content-Length value: 1*DIGIT, or a list of identical ones ("5, 5", RFC 9112 6.3); -1 when invalid
     * ("abc", "-1", "1.5", "", "5, 6"). Values beyond 18 digits count as Long.MAX_VALUE (too long anyway).
     */
    private static long contentLength(ByteBuffer b, int from, int to) {
        long result = -1;
        int i = from;
        while (true) {
            long n = 0;
            int digits = 0;
            while (i < to && b.get(i) >= '0' && b.get(i) <= '9') {
                n = digits < 18 ? n * 10 + (b.get(i) - '0') : Long.MAX_VALUE;
                digits++;
                i++;
            }
            if (digits == 0 || (result >= 0 && n != result)) {
                return -1;
            }
            result = n;
            while (i < to && (b.get(i) == ' ' || b.get(i) == '\t')) {
                i++;
            }
            if (i == to) {
                return result;
            }
            if (b.get(i) != ',') {
                return -1;
            }
            i++;
            while (i < to && (b.get(i) == ' ' || b.get(i) == '\t')) {
                i++;
            }
        }
    }

    private static String ascii(ByteBuffer b, int from, int to) {
        byte[] bytes = new byte[to - from];
        b.get(from, bytes);
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    private static boolean hasToken(String header, String token) {
        for (String part : header.split(",")) {
            if (part.trim().equalsIgnoreCase(token)) {
                return true;
            }
        }
        return false;
    }

    // ------------------------------------------------------------------ encode

    @Override
    public ByteBuffer encode(Packet packet, TioConfig tioConfig, ChannelContext ctx) {
        return ((Reply) packet).encode();
    }

    // ------------------------------------------------------------------ handler

    @Override
    public void handler(Packet packet, ChannelContext ctx) {
        Request r = (Request) packet;
        Conn c = Conn.of(ctx);
        if (c.closing) {
            c.sent(); // an earlier answer said "Connection: close": this request is not answered
            return;
        }
        if (r.refusal != 0) {
            c.reply(k.refusal(r.refusal));
            return;
        }
        int connection = !r.keepAlive ? Reply.CONN_CLOSE : r.http10 ? Reply.CONN_KEEP_ALIVE : Reply.CONN_NONE;
        boolean body = r.method != Request.HEAD;
        Integer route = ROUTES.get(r.path);
        if (route == null) {
            c.reply(new Reply(k.notFound, Reply.NOT_FOUND, body, connection));
            return;
        }
        if (r.method == Request.OTHER) {
            c.reply(new Reply(k.notAllowed, Reply.NOT_ALLOWED, body, connection));
            return;
        }
        switch (route) {
            case HELLO -> c.reply(new Reply(k.text, Reply.HELLO, body, connection));
            case SLEEP -> {
                Object slot = c.reserve(!r.keepAlive);
                Reply reply = new Reply(k.text, Reply.SLEPT, body, connection);
                timer.schedule(() -> c.complete(slot, reply), 10, TimeUnit.MILLISECONDS);
            }
            default -> {
                int id = Ids.parse(r.query);
                if (id < 0) {
                    c.reply(new Reply(k.badRequest, Reply.BAD_REQUEST, body, connection));
                    return;
                }
                // the store answers later, on its own thread (Lettuce's event loop, or the virtual thread
                // of a blocking driver): the t-io worker returns at once
                Object slot = c.reserve(!r.keepAlive);
                stores[route].get(id, r.received + timeoutNanos,
                        (message, failure) -> c.complete(slot, answer(id, message, failure, r, body, connection)));
            }
        }
    }

    private Reply answer(int id, byte[] message, Throwable failure, Request r, boolean body, int connection) {
        if (failure instanceof Unavailable) {
            return new Reply(k.unavailable, Reply.UNAVAILABLE, body, connection);
        }
        if (failure != null) {
            log.warn("{} {}?{}: 500", r.methodName(), r.path, r.query, failure);
            return new Reply(k.error, Reply.ERROR, body, connection);
        }
        if (message == null) {
            return new Reply(k.notFound, Reply.NOT_FOUND, body, connection);
        }
        return new Reply(k.json, Greeting.json(id, message), body, connection);
    }
}
