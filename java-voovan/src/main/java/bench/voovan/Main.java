package bench.voovan;

import bench.voovan.backend.Backend;
import bench.voovan.backend.Memcache;
import bench.voovan.backend.Mysql;
import bench.voovan.backend.Redis;
import bench.voovan.workaround.Exchange;
import bench.voovan.workaround.Workarounds;
import org.voovan.http.message.Request;
import org.voovan.http.server.HttpRouter;
import org.voovan.http.server.WebServer;

import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

/**
 * The endpoint contract on Voovan's WebServer. The server's settings are Voovan's conf/web.json (in the
 * working directory) with the listen address from the command line (-h, -p, -rto: Voovan's own options);
 * the routes are here. Routers run on Voovan's IO threads: /hello and every error answer inline, /sleep
 * and the backends detach (Exchange.defer) and are answered from the /sleep timer, Lettuce's event loop
 * or the virtual thread of a blocking read. Voovan 4.3.8's flaws are worked around in bench.voovan.workaround.
 */
public final class Main {
    public static void main(String[] args) throws Exception {
        int timeoutMs = Env.requireInt("BACKEND_TIMEOUT_MS");
        int mysqlPool = Env.requireInt("VOOVAN_MYSQL_POOL");
        // blocking driver calls (JDBC, xmemcached) run on virtual threads: one per read, none on an IO thread
        Executor blocking = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("backend-", 0).factory());
        // each backend may be down at start: it answers 503 until it is reachable
        Backend redis = new Redis(Env.require("REDIS_HOST"), Env.requireInt("REDIS_PORT"), timeoutMs);
        Backend mysql = new Mysql(Env.require("MYSQL_HOST"), Env.requireInt("MYSQL_PORT"), Env.require("MYSQL_USER"),
                Env.require("MYSQL_PASSWORD"), Env.require("MYSQL_DATABASE"), timeoutMs, mysqlPool, blocking);
        Backend memcache = new Memcache(Env.require("MEMCACHE_HOST"), Env.requireInt("MEMCACHE_PORT"), timeoutMs,
                Env.requireInt("VOOVAN_MEMCACHE_CONNECTIONS"), blocking);
        FixedDelay sleeper = new FixedDelay("sleep-10ms", 10);

        WebServer server = WebServer.newInstance(args); // conf/web.json, then -h/-p/-rto
        int idleTimeoutMs = Env.requireInt("IDLE_TIMEOUT_MS");
        // Voovan's keep-alive timer never sees a connection (README, Workarounds): set for the record
        server.getWebServerConfig().setKeepAliveTimeout(Math.max(1, idleTimeoutMs / 1000));
        Workarounds.limits(Env.requireInt("HEAD_TIMEOUT_MS"), idleTimeoutMs);

        Workarounds.route(server, "/hello", (req, resp) -> Exchange.of(req, resp).reply(Reply.HELLO));
        Workarounds.route(server, "/sleep", (req, resp) -> {
            Exchange.Deferred d = Exchange.of(req, resp).defer();
            sleeper.add(() -> d.complete(Reply.SLEPT));
        });
        Workarounds.route(server, "/redis", data(redis, timeoutMs));
        Workarounds.route(server, "/mysql", data(mysql, timeoutMs));
        Workarounds.route(server, "/memcache", data(memcache, timeoutMs));

        Workarounds.serve(server);
        System.out.println("java-voovan: serving, mysql pool " + mysqlPool);
        Thread.currentThread().join();
    }

    /** A data endpoint: the id is checked on the IO thread (a 400 never reaches a backend), then the read starts. */
    static HttpRouter data(Backend backend, int timeoutMs) {
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
        if (failure instanceof Backend.Unavailable) return Reply.UNAVAILABLE;
        if (failure != null) {
            System.err.println("java-voovan: 500: " + failure);
            return Reply.INTERNAL_ERROR;
        }
        return message == null ? Reply.NOT_FOUND : Reply.json(id, message);
    }
}
