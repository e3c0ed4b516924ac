package javatio;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import com.litongjava.tio.core.ChannelContext;
import com.litongjava.tio.core.TioConfig;
import com.litongjava.aio.Packet;
import com.litongjava.tio.server.intf.ServerAioHandler;

/**
 * t-io's three callbacks: decode (bytes -> Request: HTTP/1.1 request line and header fields, with the
 * contract's limits and framing rules), handler (Request -> Reply), encode (Reply -> bytes).
 *
 * <p>Where this runs: decode and handler on the aio-socket worker thread that completed the read (no
 * bizExecutor: one connection's requests are handled in order). The handler never blocks: /sleep reserves
 * its place in the connection's reply order and a timer thread sends the reply 10 ms later through
 * Tio.send; a data request does the same from the store's completion (Lettuce's event loop for Redis, a
 * virtual thread for the blocking drivers).
 */
final class HttpHandler implements ServerAioHandler {
    private static final Logger log = LoggerFactory.getLogger(HttpHandler.class);
    static final int HELLO = 0, SLEEP = 1, REDIS = 2, MYSQL = 3, MEMCACHE = 4, NO_ROUTE = -1, NOT_ALLOWED = -2;
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

    /**
     * t-io's ServerAioHandler.decode: one request from the bytes t-io has buffered for the connection, null
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
        Request r = HttpParser.parse(buffer, buffer.position(), limit, c.need);
        if (r == null) {
            c.incomplete();
            return null;
        }
        c.decoded(r.refusal != 0 || !r.keepAlive);
        return r;
    }

    // ------------------------------------------------------------------ encode

    @Override
    public ByteBuffer encode(Packet packet, TioConfig tioConfig, ChannelContext ctx) {
        return ((Reply) packet).encode(TioInternals::writeBuffer);
    }

    // ------------------------------------------------------------------ handler

    /** The route of a request: exact path (404 otherwise), then GET or HEAD (405 otherwise). */
    static int route(Request r) {
        Integer route = ROUTES.get(r.path);
        return route == null ? NO_ROUTE : r.method == Request.OTHER ? NOT_ALLOWED : route;
    }

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
        int route = route(r);
        switch (route) {
            case NO_ROUTE -> c.reply(new Reply(k.notFound, Reply.NOT_FOUND, body, connection));
            case NOT_ALLOWED -> c.reply(new Reply(k.notAllowed, Reply.NOT_ALLOWED, body, connection));
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
