package javatio;

import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import com.litongjava.tio.server.TioServer;
import com.litongjava.tio.server.ServerTioConfig;

public final class Main {
    private Main() {}

    /** How often t-io's heartbeat thread looks for idle connections: they close within this after IDLE_TIMEOUT_MS. */
    static final int HEARTBEAT_SCAN_MS = 500;
    /** Listen backlog (t-io binds with 0, which the JDK makes 50; the kernel caps it at net.core.somaxconn). */
    static final int BACKLOG = 4096;

    public static void main(String[] args) throws Exception {
        String host, name;
        int port, timeout, headTimeout, idleTimeout, mysqlPool;
        Store redis, mysql, memcache;
        // blocking driver calls (JDBC, xmemcached) run on virtual threads: one per read
        Executor blocking = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("backend-", 0).factory());
        try {
            host = Env.str("HOST");
            port = Env.integer("PORT");
            name = Env.str("STACK_NAME");
            timeout = Env.integer("BACKEND_TIMEOUT_MS");
            headTimeout = Env.integer("HEAD_TIMEOUT_MS");
            idleTimeout = Env.integer("IDLE_TIMEOUT_MS");
            // the stack's knobs: defaults in run.sh, explained in README "Tuning"
            mysqlPool = Env.integer("TIO_MYSQL_POOL");
            redis = new RedisStore(Env.str("REDIS_HOST"), Env.integer("REDIS_PORT"), timeout);
            mysql = new MysqlStore(Env.str("MYSQL_HOST"), Env.integer("MYSQL_PORT"), Env.str("MYSQL_USER"),
                    Env.str("MYSQL_PASSWORD"), Env.str("MYSQL_DATABASE"), timeout, mysqlPool, blocking);
            memcache = new MemcacheStore(Env.str("MEMCACHE_HOST"), Env.integer("MEMCACHE_PORT"), timeout, blocking);
        } catch (IllegalStateException e) {
            System.err.println("java-tio: " + e.getMessage());
            System.exit(2);
            return;
        }
        redis.warm();
        mysql.warm();
        memcache.warm();

        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "timer"); // /sleep and the head timeout
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);

        HttpHandler handler = new HttpHandler(new Reply.Kinds(name), redis, mysql, memcache, timeout, timer);
        // the fork (aio-socket): one pool of worker threads runs the read completion, decode and the handler
        // (no biz executor: handlers of a connection run in order, on the thread that read); sends are
        // asynchronous. A read held back by backpressure is issued again on a virtual thread.
        Executor readExecutor = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("tio-resume-", 0).factory());
        Listener listener = new Listener(headTimeout, idleTimeout, timer, readExecutor);
        ServerTioConfig config = new ServerTioConfig(name);
        config.setServerAioHandler(handler);
        config.setServerAioListener(listener);
        config.setWorkerThreads(Env.integer("TIO_WORKER_THREADS"));
        config.setBacklog(BACKLOG);
        config.setHeartbeatTimeout(HEARTBEAT_SCAN_MS);
        config.setReadBufferSize(20480);
        TioServer server = new TioServer(config);
        server.start(host, port);
        System.out.printf("java-tio (com.litongjava tio-core 2.0.8) listening on %s:%d (worker threads %d, backlog %d, mysql pool %d)%n",
                host, port, config.getWorkerThreads(), BACKLOG, mysqlPool);
    }
}
