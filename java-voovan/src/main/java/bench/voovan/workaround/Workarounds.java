package bench.voovan.workaround;

import org.voovan.http.message.HttpParser;
import org.voovan.http.server.HttpRouter;
import org.voovan.http.server.WebServer;
import org.voovan.http.server.context.WebContext;
import org.voovan.network.IoFilter;
import org.voovan.network.SocketContext;
import org.voovan.tools.FastThreadLocal;

import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The one place the application meets this package: every Voovan 4.3.8 behaviour the stack works
 * around is installed from here (README, Workarounds, one row each).
 */
public final class Workarounds {
    private Workarounds() {}

    /** The contract's time limits, which Voovan's own settings do not enforce (Conn does). */
    public static void limits(int headTimeoutMs, int idleTimeoutMs) {
        Conn.headTimeoutNanos = headTimeoutMs * 1_000_000L;
        Conn.idleTimeoutNanos = idleTimeoutMs * 1_000_000L;
        Conn.lingerNanos = Conn.LINGER_MS * 1_000_000L;
    }

    /** A route for GET and HEAD (Voovan routes HEAD only where a HEAD route is added), exact path only. */
    public static void route(WebServer server, String path, HttpRouter router) {
        server.get(path, router);
        server.head(path, router);
        Set<String> paths = new HashSet<>(ContractFilter.paths);
        paths.add(path);
        ContractFilter.paths = Set.copyOf(paths);
    }

    /** Starts serving: Voovan's syncServe, then the socket layer's hooks, which exist only from then on. */
    public static void serve(WebServer server) throws ReflectiveOperationException {
        checkRouterCache(ContractFilter.paths);
        widenParserTokens(HeadGuard.MAX_HEAD);
        startDateRefresher();
        Conn.startTimer();
        server.syncServe(); // creates the listener, binds and returns; the IO threads serve from here on
        // Workaround: the socket layer exists only inside syncServe, which already accepts (README, Workarounds)
        SocketContext socket = server.getServerSocket();
        socket.handler(new Conn.Handler(socket.handler())); // a connection copies the handler when accepted
        List<IoFilter> filters = socket.filterChain().getContianer();
        filters.add(0, new HeadGuard());   // before Voovan's WebServerFilter (the HTTP decoder)
        filters.add(new RawQueryFilter()); // after it
        adminRoutesOff(server);
    }

    /**
     * Voovan adds its ADMIN routes (/voovan/admin/status, shutdown, pause, reload, authtoken, ...) and an
     * OPTIONS route for them in every start, with no setting to leave them out; an ADMIN or MONITOR request
     * with an AUTH-TOKEN field skips every HttpFilter (HttpDispatcher.isFrameWorkRequest). HeadGuard drops
     * AUTH-TOKEN fields, so ContractFilter sees every request; the routes themselves are removed here.
     */
    static void adminRoutesOff(WebServer server) {
        // Workaround: admin routes always on (README, Workarounds)
        Map<String, ?> admin = server.getHttpRouters().get("ADMIN");
        if (admin != null) admin.clear();
        server.getHttpRouters().get("OPTIONS").clear(); // holds only the admin routes' OPTIONS route
    }

    /**
     * Voovan's HttpParser copies every token of a head (method, target, each field name and value) into a
     * per-thread byte[1024] (HttpParser.THREAD_BYTE_ARRAY, private, no setting): a longer token is an
     * ArrayIndexOutOfBoundsException, answered 500. The FastThreadLocal's supplier is replaced before the
     * IO threads start, so each gets an array as large as the largest head HeadGuard lets through.
     */
    @SuppressWarnings("unchecked")
    static void widenParserTokens(int size) throws ReflectiveOperationException {
        // Workaround: 1,024-byte token buffer, by reflection (README, Workarounds)
        Field f = HttpParser.class.getDeclaredField("THREAD_BYTE_ARRAY");
        f.setAccessible(true);
        ((FastThreadLocal<byte[]>) f.get(null)).setSupplier(() -> new byte[size]);
    }

    /**
     * Voovan caches route lookups per IO thread under path.hashCode() << 16 + method.hashCode(), which
     * Java parses as path.hashCode() << (16 + method.hashCode()): two routes can share a key and one would
     * then answer for the other. Refuse to start if any of ours collide.
     */
    static void checkRouterCache(Set<String> paths) {
        // Workaround: route cache key precedence (README, Workarounds)
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
     * response and rebuilds it from its 1-second HashWheelTimer, which drifts. This thread rebuilds it at
     * each second boundary and puts it back whenever Voovan's timer overwrote it with a value formatted
     * just before the boundary (checked every 10 ms), so Date is never more than ~10 ms late.
     */
    static void startDateRefresher() {
        // Workaround: Date from a drifting timer (README, Workarounds)
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
}
