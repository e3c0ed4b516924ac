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
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * The endpoint contract on Voovan's WebServer.
 *
 * Threads: Voovan's IO threads (-DIoThreadSize, at least 8) each run a selector and call the filter
 * and routers of their connections. Nothing blocks there: /hello and every error are answered inline;
 * /sleep and the backends detach with Voovan's asynchronous response (HttpResponse.getAsyncResponse)
 * and are answered from the /sleep timer (FixedDelay), Lettuce's event loop (Redis) or the virtual thread of a
 * blocking read (MariaDB, memcached; Backends).
 */
public final class Main {
    static int timeoutMs;
    static FixedDelay sleeper;

    /** The contract's paths, matched exactly (Voovan's own route matching also accepts a trailing slash). */
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

        // The stack's knobs: environment variables with their defaults in stack.toml's run line (README, "Tuning").
        int mysqlPool = Env.requireInt("VOOVAN_MYSQL_POOL");
        int memcacheConnections = Env.requireInt("VOOVAN_MEMCACHE_CONNECTIONS");

        sleeper = new FixedDelay("sleep-10ms", 10);

        // blocking driver calls (JDBC, xmemcached) run on virtual threads: one per read, none on an IO thread
        Executor blocking = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("backend-", 0).factory());
        Backends.Redis redis = new Backends.Redis(redisHost, redisPort, timeoutMs);
        Backends.Mysql mysql = new Backends.Mysql(mysqlHost, mysqlPort, mysqlUser, mysqlPassword, mysqlDatabase,
                timeoutMs, mysqlPool, blocking);
        Backends.Memcache memcache = new Backends.Memcache(memcacheHost, memcachePort, timeoutMs, memcacheConnections,
                blocking);
        mysql.warm(mysqlPool);

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
        cfg.setSendTimeout(1);
        Conn.headTimeoutNanos = headTimeoutMs * 1_000_000L;
        Conn.idleTimeoutNanos = idleTimeoutMs * 1_000_000L;
        Conn.lingerNanos = Conn.LINGER_MS * 1_000_000L;
        widenParserTokens(HeadGuard.MAX_HEAD);
        cfg.getFilterConfigs().add(new HttpFilterConfig("contract", ContractFilter.class.getName(), null));

        WebServer server = WebServer.newInstance(cfg);
        HttpRouter hello = (req, resp) -> Exchange.of(req, resp).reply(Reply.HELLO);
        HttpRouter sleep = (req, resp) -> {
            Exchange.Deferred d = Exchange.of(req, resp).defer();
            sleeper.add(() -> d.complete(Reply.SLEPT));
        };
        Map<String, HttpRouter> routes = new HashMap<>();
        routes.put("/hello", hello);
        routes.put("/sleep", sleep);
        routes.put("/redis", data(redis));
        routes.put("/mysql", data(mysql));
        routes.put("/memcache", data(memcache));
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
        System.out.println("java-voovan: listening on " + host + ":" + port + ", mysql pool " + mysqlPool
                + ", memcached connections " + memcacheConnections);

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

    /**
     * A data endpoint: the id is checked on the IO thread (a 400 never touches a backend), then the
     * response is detached and the read started; whichever thread ends the read writes the answer.
     */
    static HttpRouter data(Backends.Backend backend) {
        long timeoutNanos = timeoutMs * 1_000_000L;
        return (req, resp) -> {
            long deadline = System.nanoTime() + timeoutNanos;
            Exchange ex = Exchange.of(req, resp);
            int id = Ids.parse(((Request) req).getQueryString("UTF-8"));
            if (id < 0) {
                ex.reply(Reply.BAD_REQUEST);
                return;
            }
            Exchange.Deferred d = ex.defer();
            backend.get(id, deadline, (message, failure) -> d.complete(answer(id, message, failure)));
        };
    }

    static Reply answer(int id, byte[] message, Throwable failure) {
        if (failure instanceof Backends.Unavailable) return Reply.UNAVAILABLE;
        if (failure != null) {
            System.err.println("java-voovan: 500: " + failure);
            return Reply.INTERNAL_ERROR;
        }
        return message == null ? Reply.NOT_FOUND : Reply.json(id, message);
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
     * raw query is re-escaped so that Voovan's decoding gives back the raw text; the routers parse it
     * (README, Workarounds).
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
     * Workaround: Voovan's route matching, static-file fallback and HTML error pages (README, Workarounds).
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
