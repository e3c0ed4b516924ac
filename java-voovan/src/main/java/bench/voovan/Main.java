package bench.voovan;

import org.voovan.http.message.Request;
import org.voovan.http.server.HttpFilter;
import org.voovan.http.server.HttpRequest;
import org.voovan.http.server.HttpResponse;
import org.voovan.http.server.HttpRouter;
import org.voovan.http.server.WebServer;
import org.voovan.http.server.context.HttpFilterConfig;
import org.voovan.http.server.context.WebContext;
import org.voovan.http.server.context.WebServerConfig;
import org.voovan.network.IoFilter;
import org.voovan.network.IoSession;
import org.voovan.network.SocketContext;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The endpoint contract on Voovan's WebServer.
 *
 * Threads: Voovan's IO threads (-DIoThreadSize, at least 8) each run a selector and call the filter
 * and routers of their connections. Nothing blocks there: /hello and every error are answered inline;
 * /sleep and the backends detach with Voovan's asynchronous response (HttpResponse.getAsyncResponse)
 * and are answered from a timer thread (/sleep, deadlines: FixedDelay) or a fixed worker pool (blocking drivers).
 */
public final class Main {
    static int timeoutMs;
    static FixedDelay sleeper;
    static FixedDelay deadlines;

    /** The contract's paths, matched exactly (Voovan's own route matching also accepts a trailing slash). */
    /** Measurement switches for the README's Tuning table; both off in the stack as shipped. */
    static final boolean BLOCKING_SLEEP = Boolean.getBoolean("bench.blockingSleep");
    static final boolean INLINE_BACKENDS = Boolean.getBoolean("bench.inlineBackends");

    static final Set<String> PATHS = Set.of("/hello", "/sleep", "/redis", "/mysql", "/memcache");

    public static void main(String[] args) throws Exception {
        // Voovan reads its Server header value once, from the system property "Server".
        String stack = Env.require("STACK_NAME");
        System.setProperty("Server", stack);

        String host = Env.require("HOST");
        int port = Env.requireInt("PORT");
        timeoutMs = Env.requireInt("BACKEND_TIMEOUT_MS");
        String redisHost = Env.require("REDIS_HOST");
        int redisPort = Env.requireInt("REDIS_PORT");
        String mysqlHost = Env.require("MYSQL_HOST");
        int mysqlPort = Env.requireInt("MYSQL_PORT");
        String mysqlUser = Env.require("MYSQL_USER");
        String mysqlPassword = Env.require("MYSQL_PASSWORD");
        String mysqlDatabase = Env.require("MYSQL_DATABASE");
        String memcacheHost = Env.require("MEMCACHE_HOST");
        int memcachePort = Env.requireInt("MEMCACHE_PORT");
        int headTimeoutMs = Env.requireInt("HEAD_TIMEOUT_MS");
        int idleTimeoutMs = Env.requireInt("IDLE_TIMEOUT_MS");

        // Tuning knobs (README, "Tuning"): workers = threads per backend that run its blocking driver
        // calls; the Redis and SQL pools have exactly that many connections, so a worker never waits
        // for a connection. One pool per backend: a frozen MariaDB cannot starve /redis of workers.
        int workerCount = Env.knob("bench.workers", 16);
        int memcacheConnections = Env.knob("bench.memcacheConnections", 2);

        sleeper = new FixedDelay("sleep-10ms", 10);
        deadlines = new FixedDelay("deadline", timeoutMs);

        Backends.Redis redis = new Backends.Redis(redisHost, redisPort, timeoutMs, workerCount);
        Backends.Mysql mysql = new Backends.Mysql(mysqlHost, mysqlPort, mysqlUser, mysqlPassword, mysqlDatabase,
                timeoutMs, workerCount);
        Backends.Memcache memcache = new Backends.Memcache(memcacheHost, memcachePort, timeoutMs, memcacheConnections);
        redis.warm();
        mysql.warm(workerCount);

        WebServerConfig cfg = new WebServerConfig();
        cfg.setHost(host);
        cfg.setPort(port);
        cfg.setGzip(false);              // default true: would chunk-encode larger text bodies
        cfg.setAccessLog(false);
        cfg.setCache(false);             // Voovan's whole-response byte cache: off (no caching)
        cfg.setEnableWebSocket(false);
        cfg.setMatchRouteIgnoreCase(false);
        // Voovan's keep-alive timeout (seconds; <= 0 would close after every response). Its timer never
        // sees a connection (WebServerHandler.onFlush), so Conn enforces IDLE_TIMEOUT_MS; set for the record.
        cfg.setKeepAliveTimeout(seconds(idleTimeoutMs));
        // Voovan's ReadTimeout (seconds) bounds how long its parser waits on the IO thread for missing
        // bytes of a head or body. HeadGuard only ever hands it complete heads and no body; a backstop.
        cfg.setReadTimeout(seconds(headTimeoutMs));
        // Voovan writes with a busy loop on the IO thread until this many seconds pass, then closes.
        // Conn writes every answer itself without blocking, so this loop only runs if Voovan ever
        // flushes on its own; kept short (README, "Tuning").
        cfg.setSendTimeout(Env.knob("bench.sendTimeoutSeconds", 1));
        Conn.headTimeoutNanos = headTimeoutMs * 1_000_000L;
        Conn.idleTimeoutNanos = idleTimeoutMs * 1_000_000L;
        Conn.lingerNanos = Env.knob("bench.lingerMs", 2000) * 1_000_000L;
        widenParserTokens(HeadGuard.MAX_HEAD);
        cfg.getFilterConfigs().add(new HttpFilterConfig("contract", ContractFilter.class.getName(), null));

        WebServer server = WebServer.newInstance(cfg);
        HttpRouter hello = (req, resp) -> Exchange.of(req, resp).reply(Reply.HELLO);
        HttpRouter sleep = (req, resp) -> {
            Exchange.Deferred d = Exchange.of(req, resp).defer();
            sleeper.add(() -> d.complete(Reply.SLEPT));
        };
        if (BLOCKING_SLEEP) { // measurement only (README, Tuning): what the async path is worth
            sleep = (req, resp) -> {
                Thread.sleep(10);
                Exchange.of(req, resp).reply(Reply.SLEPT);
            };
        }
        Map<String, HttpRouter> routes = new HashMap<>();
        routes.put("/hello", hello);
        routes.put("/sleep", sleep);
        routes.put("/redis", data(redis, workers("redis", workerCount)));
        routes.put("/mysql", data(mysql, workers("mysql", workerCount)));
        routes.put("/memcache", data(memcache, workers("memcache", workerCount)));
        for (Map.Entry<String, HttpRouter> e : routes.entrySet()) {
            server.get(e.getKey(), e.getValue());
            server.head(e.getKey(), e.getValue());
        }
        checkRouterCache(routes.keySet());

        startDateRefresher();
        Conn.startTimer();
        server.syncServe(); // creates the listener, binds and returns; the IO threads serve from here on
        // Voovan creates its socket layer inside syncServe, so it is extended here. Every connection
        // copies the listener's handler when accepted and shares its filter list.
        SocketContext socket = server.getServerSocket();
        socket.handler(new Conn.Handler(socket.handler()));
        List<IoFilter> filters = socket.filterChain().getContianer();
        filters.add(0, new HeadGuard());   // before Voovan's WebServerFilter (the HTTP decoder)
        filters.add(new RawQueryFilter()); // after it
        System.out.println("java-voovan: listening on " + host + ":" + port + ", " + workerCount + " workers per backend");

        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                server.stop();
            } catch (Throwable ignored) {
            }
        }));
        Thread.currentThread().join();
    }

    static int seconds(int ms) {
        return Math.max(1, (ms + 999) / 1000);
    }

    /**
     * Voovan's HttpParser copies every token of a request head (method, target, each field name and
     * value) into a per-thread byte[1024] (HttpParser.THREAD_BYTE_ARRAY, a private FastThreadLocal with no
     * setting): a longer token is an ArrayIndexOutOfBoundsException, which WebServerFilter answers with
     * 500 "... error: internal". The array is created lazily per IO thread from the FastThreadLocal's
     * supplier, which FastThreadLocal lets us replace; done before the server starts, so every IO thread
     * gets one as large as the largest head HeadGuard lets through.
     */
    @SuppressWarnings("unchecked")
    static void widenParserTokens(int size) throws ReflectiveOperationException {
        java.lang.reflect.Field f = org.voovan.http.message.HttpParser.class.getDeclaredField("THREAD_BYTE_ARRAY");
        f.setAccessible(true);
        ((org.voovan.tools.FastThreadLocal<byte[]>) f.get(null)).setSupplier(() -> new byte[size]);
    }

    /** A data endpoint: validate the id on the IO thread, then one read on a worker, bounded by the deadline. */
    static ThreadPoolExecutor workers(String name, int count) {
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(count, count, 0, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), r -> {
                    Thread t = new Thread(r, name + "-" + n.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.prestartAllCoreThreads();
        return pool;
    }

    static HttpRouter data(Backends.Backend backend, ThreadPoolExecutor workers) {
        return (req, resp) -> {
            Exchange ex = Exchange.of(req, resp);
            int id = Ids.parse(((Request) req).getQueryString("UTF-8"));
            if (id < 0) {
                ex.reply(Reply.BAD_REQUEST);
                return;
            }
            if (INLINE_BACKENDS) { // measurement only: the blocking call on the IO thread itself
                Reply r;
                try {
                    byte[] message = backend.get(id);
                    r = message == null ? Reply.NOT_FOUND : Reply.json(id, message);
                } catch (Exception e) {
                    r = unavailable(e) ? Reply.UNAVAILABLE : Reply.INTERNAL_ERROR;
                }
                ex.reply(r);
                return;
            }
            Exchange.Deferred d = ex.defer();
            deadlines.add(() -> d.complete(Reply.UNAVAILABLE));
            try {
                workers.execute(() -> {
                    if (d.isDone()) return; // waited past the deadline in the queue: already answered 503
                    Reply r;
                    try {
                        byte[] message = backend.get(id);
                        r = message == null ? Reply.NOT_FOUND : Reply.json(id, message);
                    } catch (Exception e) {
                        r = unavailable(e) ? Reply.UNAVAILABLE : Reply.INTERNAL_ERROR;
                    }
                    d.complete(r);
                });
            } catch (RejectedExecutionException e) {
                d.complete(Reply.UNAVAILABLE);
            }
        };
    }

    /** Down, refusing, timed out, no pooled connection in time: 503. Anything else: 500. */
    static boolean unavailable(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof IOException || t instanceof TimeoutException
                    || t instanceof java.sql.SQLTransientException
                    || t instanceof java.sql.SQLNonTransientConnectionException
                    || t instanceof java.sql.SQLRecoverableException
                    || t instanceof redis.clients.jedis.exceptions.JedisConnectionException
                    || t instanceof net.rubyeye.xmemcached.exception.MemcachedException
                    || t instanceof java.util.NoSuchElementException) { // commons-pool: no connection within maxWait
                return true;
            }
            if (t instanceof java.sql.SQLException s && s.getSQLState() != null && s.getSQLState().startsWith("08")) {
                return true;
            }
        }
        return false;
    }

    /**
     * Voovan caches route lookups per IO thread under the key path.hashCode() << 16 + method.hashCode(),
     * which Java parses as path.hashCode() << (16 + method.hashCode()): two routes can share a key and
     * one would then answer for the other. Refuse to start if any of ours collide.
     */
    static void checkRouterCache(Set<String> paths) {
        Set<Integer> seen = new HashSet<>();
        for (String p : paths) {
            for (String m : new String[] {"GET", "HEAD"}) {
                int mark = p.hashCode() << 16 + m.hashCode();
                if (!seen.add(mark)) throw new IllegalStateException("Voovan router cache key collision for " + m + " " + p);
            }
        }
    }

    /**
     * Voovan appends WebContext.RESPONSE_COMMON_HEADER ("Date: ...\r\nServer: ...\r\n\r\n") to every
     * response and rebuilds it from its 1-second HashWheelTimer (a fixed-delay java.util.Timer that
     * drifts). This thread rebuilds it at each second boundary and puts it back if Voovan's timer
     * overwrote it with a value formatted just before the boundary, so Date is never more than ~10 ms late.
     */
    static void startDateRefresher() {
        DateTimeFormatter imf = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ENGLISH)
                .withZone(ZoneOffset.UTC);
        Thread t = new Thread(() -> {
            long second = -1;
            byte[] current = null;
            while (true) {
                long now = System.currentTimeMillis();
                long s = now / 1000;
                if (s != second) {
                    second = s;
                    current = ("Date: " + imf.format(Instant.ofEpochSecond(s)) + "\r\nServer: " + WebContext.SERVER
                            + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
                }
                if (WebContext.RESPONSE_COMMON_HEADER != current) WebContext.RESPONSE_COMMON_HEADER = current;
                try {
                    Thread.sleep(Math.min(10, 1000 - now % 1000 + 1));
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "date");
        t.setDaemon(true);
        t.start();
    }

    /**
     * Runs before Voovan's handler builds its HttpRequest, which URL-decodes the whole query string and
     * throws on a malformed escape such as %zz (the connection is then closed without an answer). The
     * raw query is re-escaped so that Voovan's decoding gives back the raw text; the routers parse it.
     */
    static final class RawQueryFilter implements IoFilter {
        @Override
        public Object decode(IoSession session, Object object) {
            if (object instanceof Request r) {
                String q = r.protocol().getQueryString();
                if (q != null && (q.indexOf('%') >= 0 || q.indexOf('+') >= 0)) {
                    r.protocol().setQueryString(q.replace("%", "%25").replace("+", "%2B"));
                }
            }
            return object;
        }

        @Override
        public Object encode(IoSession session, Object object) {
            return object;
        }
    }

    /**
     * Voovan's HttpFilter, run before its router: unknown paths (exactly, case-sensitively) are 404,
     * other methods on known paths 405; only GET/HEAD on the five paths reach the routers.
     */
    public static final class ContractFilter implements HttpFilter {
        @Override
        public Object onRequest(HttpFilterConfig filterConfig, HttpRequest request, HttpResponse response,
                                Object prevFilterResult) {
            String path = request.protocol().getPath();
            if (!PATHS.contains(path)) {
                Exchange.of(request, response).reply(Reply.NOT_FOUND);
                return null; // null: Voovan skips its router
            }
            String method = request.protocol().getMethod();
            if (!"GET".equals(method) && !"HEAD".equals(method)) {
                Exchange.of(request, response).reply(Reply.METHOD_NOT_ALLOWED);
                return null;
            }
            return Boolean.TRUE;
        }

        @Override
        public Object onResponse(HttpFilterConfig filterConfig, HttpRequest request, HttpResponse response,
                                 Object prevFilterResult) {
            return Boolean.TRUE;
        }
    }
}
