package javatio;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tio.core.ChannelContext;
import org.tio.core.Tio;
import org.tio.core.TioConfig;
import org.tio.core.exception.TioDecodeException;
import org.tio.core.intf.Packet;
import org.tio.http.common.HttpRequestDecoder;
import org.tio.http.common.Method;
import org.tio.server.intf.TioServerHandler;

/**
 * t-io's three callbacks: decode (bytes -> Request, with t-io's HTTP request-line and header parser),
 * handler (Request -> Reply), encode (Reply -> bytes).
 *
 * <p>Where this runs: decode on the t-io group thread that completed the read (the AIO completion
 * handler); handler on a t-io worker (PacketHandlerMode.QUEUE, one at a time per connection). The
 * handler never blocks: /sleep reserves its place in the connection's reply order and a timer thread
 * sends the reply 10 ms later through Tio.send; a data request does the same with a virtual thread
 * that makes the (blocking) driver call.
 */
final class HttpHandler implements TioServerHandler {
    private static final Logger log = LoggerFactory.getLogger(HttpHandler.class);
    private static final int MAX_BODY = 64 * 1024;
    private static final int HELLO = 0, SLEEP = 1, REDIS = 2, MYSQL = 3, MEMCACHE = 4;
    private static final Map<String, Integer> ROUTES = new HashMap<>();
    /** Experiment switch for the README's /sleep measurement only: sleep on the handler thread. */
    private static final boolean BLOCKING_SLEEP = Boolean.getBoolean("javatio.blockingSleep");

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
    /** Where blocking backend calls run; null = inline on the t-io worker (experiment switch). */
    private final Executor backend;

    HttpHandler(Reply.Kinds kinds, Store redis, Store mysql, Store memcache, int timeoutMs,
                ScheduledExecutorService timer, Executor backend) {
        this.k = kinds;
        stores[REDIS] = redis;
        stores[MYSQL] = mysql;
        stores[MEMCACHE] = memcache;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        this.timer = timer;
        this.backend = backend;
    }

    // ------------------------------------------------------------------ decode

    /**
     * t-io's own HttpRequestDecoder.decode() is not used as a whole: it URL-decodes the query string
     * itself and closes the connection on a malformed one (`%zz`), where the contract wants a 400.
     * Its request-line parser is not used either: it takes the method and path strings from StrCache,
     * a cache keyed by a 31-hash of the bytes only, so a path whose hash collides with a cached one
     * comes back as that one (GET /helmP was answered as /hello). Its header parser is used.
     */
    @Override
    public Packet decode(ByteBuffer buffer, int limit, int position, int readableLength, ChannelContext ctx)
            throws TioDecodeException {
        Line line = requestLine(buffer);
        if (line == null) {
            return null; // incomplete: t-io keeps the bytes and calls again when more arrive
        }
        Map<String, String> headers = new HashMap<>(16);
        if (!HttpRequestDecoder.parseHeaderLine(buffer, headers, 0, null)) {
            return null;
        }
        if (headers.containsKey("transfer-encoding")) {
            throw new TioDecodeException("chunked request bodies are not supported");
        }
        String cl = headers.get("content-length");
        int contentLength = 0;
        if (cl != null) {
            try {
                contentLength = Integer.parseInt(cl.trim());
            } catch (NumberFormatException e) {
                throw new TioDecodeException("bad Content-Length");
            }
            if (contentLength < 0 || contentLength > MAX_BODY) {
                throw new TioDecodeException("Content-Length out of range");
            }
        }
        if (buffer.remaining() < contentLength) {
            ctx.setPacketNeededLength(buffer.position() - position + contentLength);
            return null;
        }
        buffer.position(buffer.position() + contentLength); // request bodies are ignored

        String connection = headers.get("connection");
        boolean http10 = line.http10;
        boolean keepAlive;
        if (http10) {
            keepAlive = connection != null && hasToken(connection, "keep-alive");
        } else {
            keepAlive = connection == null || !hasToken(connection, "close");
        }
        return new Request(line.method, line.path, line.query, keepAlive, http10);
    }

    private static final int MAX_REQUEST_LINE = 8192;

    private record Line(Method method, String path, String query, boolean http10) {}

    /** "METHOD SP target SP HTTP/1.x" up to LF; null while incomplete. */
    private static Line requestLine(ByteBuffer buffer) throws TioDecodeException {
        int start = buffer.position(), limit = buffer.limit();
        int eol = -1;
        for (int i = start; i < limit; i++) {
            if (buffer.get(i) == '\n') {
                eol = i;
                break;
            }
        }
        if (eol < 0) {
            if (limit - start > MAX_REQUEST_LINE) {
                throw new TioDecodeException("request line too long");
            }
            return null;
        }
        int end = eol > start && buffer.get(eol - 1) == '\r' ? eol - 1 : eol;
        int sp1 = -1, sp2 = -1;
        for (int i = start; i < end; i++) {
            if (buffer.get(i) == ' ') {
                if (sp1 < 0) {
                    sp1 = i;
                } else {
                    sp2 = i;
                }
            }
        }
        if (sp1 <= start || sp2 < 0 || sp2 == sp1 + 1 || end - sp2 - 1 != 8) {
            throw new TioDecodeException("malformed request line");
        }
        String version = ascii(buffer, sp2 + 1, end);
        if (!version.startsWith("HTTP/1.")) {
            throw new TioDecodeException("not HTTP/1.x");
        }
        String target = ascii(buffer, sp1 + 1, sp2);
        int q = target.indexOf('?');
        buffer.position(eol + 1);
        return new Line(Method.from(ascii(buffer, start, sp1)), q < 0 ? target : target.substring(0, q),
                q < 0 ? "" : target.substring(q + 1), version.equals("HTTP/1.0"));
    }

    private static String ascii(ByteBuffer b, int from, int to) {
        byte[] bytes = new byte[to - from];
        b.get(from, bytes);
        return new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1);
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
        Conn c = (Conn) ctx.getAttribute(Conn.KEY);
        if (c == null) {
            c = new Conn(ctx);
            ctx.setAttribute(Conn.KEY, c);
        }
        if (c.closing) {
            return; // a previous request on this connection asked to close
        }
        if (c.overdue()) {
            c.closing = true;
            Tio.remove(ctx, "more than " + Conn.MAX_UNSENT + " replies unread: the client does not read");
            return;
        }
        int connection = !r.keepAlive ? Reply.CONN_CLOSE : r.http10 ? Reply.CONN_KEEP_ALIVE : Reply.CONN_NONE;
        if (!r.keepAlive) {
            c.closing = true;
        }
        boolean body = r.method != Method.HEAD;
        Integer route = ROUTES.get(r.path);
        if (route == null) {
            c.reply(new Reply(k.notFound, Reply.NOT_FOUND, body, connection));
            return;
        }
        if (r.method != Method.GET && r.method != Method.HEAD) {
            c.reply(new Reply(k.notAllowed, Reply.NOT_ALLOWED, body, connection));
            return;
        }
        switch (route) {
            case HELLO -> c.reply(new Reply(k.text, Reply.HELLO, body, connection));
            case SLEEP -> {
                if (BLOCKING_SLEEP) {
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    c.reply(new Reply(k.text, Reply.SLEPT, body, connection));
                    return;
                }
                Object slot = c.reserve();
                Reply reply = new Reply(k.text, Reply.SLEPT, body, connection);
                Conn conn = c;
                timer.schedule(() -> conn.complete(slot, reply), 10, TimeUnit.MILLISECONDS);
            }
            default -> {
                int id = Ids.parse(r.query);
                if (id < 0) {
                    c.reply(new Reply(k.badRequest, Reply.BAD_REQUEST, body, connection));
                } else if (backend == null) {
                    c.reply(fetch(stores[route], id, r, body, connection));
                } else {
                    // the blocking driver call runs on a virtual thread: the t-io worker returns at once
                    Object slot = c.reserve();
                    Conn conn = c;
                    Store store = stores[route];
                    backend.execute(() -> conn.complete(slot, fetch(store, id, r, body, connection)));
                }
            }
        }
    }

    private Reply fetch(Store store, int id, Request r, boolean body, int connection) {
        try {
            byte[] message = store.get(id, r.received + timeoutNanos);
            if (message == null) {
                return new Reply(k.notFound, Reply.NOT_FOUND, body, connection);
            }
            return new Reply(k.json, Json.greeting(id, message), body, connection);
        } catch (Unavailable e) {
            return new Reply(k.unavailable, Reply.UNAVAILABLE, body, connection);
        } catch (Exception e) {
            log.warn("{} {}?{}: 500", r.method, r.path, r.query, e);
            return new Reply(k.error, Reply.ERROR, body, connection);
        }
    }
}
