package javatio;

import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import org.tio.core.PacketHandlerMode;
import org.tio.server.TioServer;
import org.tio.server.TioServerConfig;
import org.tio.utils.Threads;
import org.tio.utils.thread.pool.SynThreadPoolExecutor;

public final class Main {
    private Main() {}

    /** How often t-io's heartbeat thread looks for idle connections: they close within this after IDLE_TIMEOUT_MS. */
    static final int HEARTBEAT_SCAN_MS = 500;
    /** Virtual threads for the sends of connections held back by backpressure: at most one each. */
    static final int SEND_THREADS = 16384;
    /** Listen backlog (t-io binds with 0, which the JDK makes 50; the kernel caps it at net.core.somaxconn). */
    static final int BACKLOG = 4096;

    public static void main(String[] args) throws Exception {
        String host, name;
        int port, timeout, headTimeout, idleTimeout, mysqlPool;
        PacketHandlerMode mode;
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
            mode = Env.choice("TIO_PACKET_HANDLER_MODE", PacketHandlerMode.class);
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
        // t-io's two pools: "group" runs the AIO completion handlers (read, decode, and in SINGLE_THREAD
        // mode the handler), "tio" runs SendRunnable/CloseRunnable (and the handler in QUEUE mode).
        // Sizes come from t-io's own properties TIO_MAX_POOL_SIZE_FOR_GROUP / TIO_MAX_POOL_SIZE_FOR_TIO.
        // The sends of a client that stopped reading (Conn, backpressure): t-io's own SynThreadPoolExecutor
        // (it keeps each connection's SendRunnable to one thread at a time), with virtual threads, so that
        // a write that never completes parks a virtual thread instead of holding a tio-worker.
        SynThreadPoolExecutor sendExecutor = new SynThreadPoolExecutor(SEND_THREADS, SEND_THREADS, 10,
                new LinkedBlockingQueue<>(), Thread.ofVirtual().name("tio-send-", 0).factory(), "tio-send");
        sendExecutor.allowCoreThreadTimeOut(true);
        Listener listener = new Listener(headTimeout, idleTimeout, timer, Threads.getGroupExecutor(), sendExecutor);
        TioServerConfig config = new TioServerConfig(name, handler, listener, Threads.getTioExecutor(),
                Threads.getGroupExecutor());
        config.packetHandlerMode = mode;
        // t-io's heartbeat: every TioConfig.heartbeatTimeout ms it closes each connection that has neither
        // received a byte nor sent a packet for its ChannelContext.heartbeatTimeout (= IDLE_TIMEOUT_MS, set in
        // Listener.onAfterConnected). The global value is only the period of that scan.
        config.setHeartbeatTimeout(HEARTBEAT_SCAN_MS);
        TioServer server = new BacklogTioServer(config, BACKLOG);
        server.start(host, port);
        System.out.printf("java-tio listening on %s:%d (group threads %d, tio threads %d, mode %s, read buffer %d,"
                        + " backlog %d, mysql pool %d, head timeout %d ms, idle timeout %d ms)%n",
                host, port, Threads.MAX_POOL_SIZE_FOR_GROUP, Threads.MAX_POOL_SIZE_FOR_TIO, mode,
                config.getReadBufferSize(), BACKLOG, mysqlPool, headTimeout, idleTimeout);
    }
}
