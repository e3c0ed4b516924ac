import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowIterator;
import io.vertx.sqlclient.Tuple;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The stack's MariaDB path without Netty's HTTP server: the same Vert.x MySQL pool as Mysql.java
 * (same options, one Vert.x event loop as when the stack is pinned to one CPU), CLIENTS reads in
 * flight, each taking a connection, running the prepared SELECT for a random id 1..10000, taking
 * the message's bytes and starting the next. What it prints, queries per second and CPU µs per
 * query of this whole JVM, is what the client costs: no HTTP server using it can do better on the
 * same CPU (NOTES.md, the /mysql note). Run it as that note says (pinned like the benchmark pins the stack).
 */
public class VertxMysqlAlone {
    public static void main(String[] args) throws Exception {
        int clients = Integer.parseInt(env("CLIENTS", "64"));
        int poolSize = Integer.parseInt(env("MYSQL_POOL", "16"));
        int warmup = Integer.parseInt(env("WARMUP_S", "10"));
        int seconds = Integer.parseInt(env("SECONDS", "10"));
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1)
                .setInternalBlockingPoolSize(1).setPreferNativeTransport(true));
        MySQLConnectOptions connect = new MySQLConnectOptions()
                .setHost(env("MYSQL_HOST", null)).setPort(Integer.parseInt(env("MYSQL_PORT", null)))
                .setUser(env("MYSQL_USER", null)).setPassword(env("MYSQL_PASSWORD", null))
                .setDatabase(env("MYSQL_DATABASE", null)).setCharset("utf8mb4")
                .setCachePreparedStatements(true).setPreparedStatementCacheMaxSize(4);
        Pool pool = MySQLBuilder.pool().with(new PoolOptions().setMaxSize(poolSize).setMaxWaitQueueSize(16_384))
                .connectingTo(connect).using(vertx).build();
        AtomicLong done = new AtomicLong();
        AtomicLong failed = new AtomicLong();
        for (int i = 0; i < clients; i++) {
            next(pool, done, failed);
        }
        Thread.sleep(warmup * 1000L);
        long n0 = done.get(), cpu0 = cpu(), t0 = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        long n = done.get() - n0, cpu = cpu() - cpu0, t = System.nanoTime() - t0;
        System.out.printf("%d clients, pool %d: %,.0f queries/s, %.1f µs CPU per query, %d failed%n",
                clients, poolSize, n * 1e9 / t, cpu / 1e3 / n, failed.get());
        System.exit(0);
    }

    /** One read, then the next: the stack's Mysql.get without the HTTP request around it. */
    static void next(Pool pool, AtomicLong done, AtomicLong failed) {
        int id = ThreadLocalRandom.current().nextInt(1, 10_001);
        pool.getConnection().onComplete(acquired -> {
            if (acquired.failed()) {
                failed.incrementAndGet();
                next(pool, done, failed);
                return;
            }
            var connection = acquired.result();
            connection.preparedQuery("SELECT id, message FROM greeting WHERE id = ?").execute(Tuple.of(id))
                    .onComplete(ar -> {
                        connection.close();
                        if (ar.succeeded()) {
                            RowIterator<Row> rows = ar.result().iterator();
                            if (rows.hasNext() && rows.next().getString(1).getBytes(StandardCharsets.UTF_8).length > 0) {
                                done.incrementAndGet();
                            }
                        } else {
                            failed.incrementAndGet();
                        }
                        next(pool, done, failed);
                    });
        });
    }

    static long cpu() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    static String env(String name, String fallback) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            if (fallback == null) throw new IllegalArgumentException(name + " is not set (source shared-schema/defaults.env)");
            return fallback;
        }
        return v;
    }
}
