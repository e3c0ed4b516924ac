import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import java.lang.management.ManagementFactory;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The stack's MariaDB path without Tomcat and Spring: CLIENTS virtual threads, each taking its turn
 * on a fair semaphore with as many permits as the pool has connections (the stack's FairAdmission, removed on 2026-11-28), borrowing
 * from a HikariCP pool with the JDBC URL and pool settings of application.properties (MariaDB
 * Connector/J), setting the network timeout and running the prepared SELECT for a random id
 * 1..10000, in a loop. What it prints, queries per second and CPU µs per query of this whole JVM,
 * is what the driver, the pool and the turn cost (README, Limits). JDBC_OPTIONS is appended to the
 * JDBC URL, so that the driver's options can be compared.
 */
public class JdbcAlone {
    public static void main(String[] args) throws Exception {
        int clients = Integer.parseInt(env("CLIENTS", "64"));
        int poolSize = Integer.parseInt(env("POOL", "16"));
        int warmup = Integer.parseInt(env("WARMUP_S", "10"));
        int seconds = Integer.parseInt(env("SECONDS", "10"));
        int timeout = Integer.parseInt(env("BACKEND_TIMEOUT_MS", null));
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:mariadb://" + env("MYSQL_HOST", null) + ":" + env("MYSQL_PORT", null) + "/"
                + env("MYSQL_DATABASE", null) + "?sslMode=disable&connectTimeout=" + timeout + "&socketTimeout=" + timeout
                + env("JDBC_OPTIONS", "")); // e.g. "&useServerPrepStmts=true" to compare the driver's protocols
        config.setUsername(env("MYSQL_USER", null));
        config.setPassword(env("MYSQL_PASSWORD", null));
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(poolSize);
        config.setConnectionTimeout(timeout);
        config.setValidationTimeout(250);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            Semaphore turns = new Semaphore(poolSize, true);
            AtomicLong done = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            for (int i = 0; i < clients; i++) {
                Thread.ofVirtual().start(() -> {
                    while (true) {
                        try {
                            if (!turns.tryAcquire(timeout, TimeUnit.MILLISECONDS)) {
                                failed.incrementAndGet();
                                continue;
                            }
                            try (Connection c = pool.getConnection()) {
                                c.setNetworkTimeout(Runnable::run, timeout);
                                try (PreparedStatement s = c.prepareStatement("SELECT id, message FROM greeting WHERE id = ?")) {
                                    s.setInt(1, ThreadLocalRandom.current().nextInt(1, 10_001));
                                    try (ResultSet rows = s.executeQuery()) {
                                        if (rows.next() && rows.getBytes(2) != null) done.incrementAndGet(); else failed.incrementAndGet();
                                    }
                                }
                            } finally {
                                turns.release();
                            }
                        } catch (Exception e) {
                            failed.incrementAndGet();
                        }
                    }
                });
            }
            Thread.sleep(warmup * 1000L);
            long n0 = done.get(), cpu0 = cpu(), t0 = System.nanoTime();
            Thread.sleep(seconds * 1000L);
            long n = done.get() - n0, cpu = cpu() - cpu0, t = System.nanoTime() - t0;
            System.out.printf("%d clients, pool %d: %,.0f queries/s, %.1f µs CPU per query, %d failed%n",
                    clients, poolSize, n * 1e9 / t, cpu / 1e3 / n, failed.get());
            System.exit(0);
        }
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
