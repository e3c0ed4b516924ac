import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.ClientSetInfoConfig;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The stack's Redis path without Tomcat and Spring: CLIENTS virtual threads, each taking its turn
 * on a fair semaphore with as many permits as the pool has connections (the stack's FairAdmission, removed on 2026-11-28), borrowing
 * from a JedisPool configured as RedisGreetings configured it before Spring Data Redis, setting the socket timeout and
 * sending GET greeting:<random 1..10000>, in a loop. What it prints, GETs per second and CPU µs per
 * GET of this whole JVM, is what the client, its pool and the turn cost (README, Limits).
 */
public class JedisAlone {
    public static void main(String[] args) throws Exception {
        int clients = Integer.parseInt(env("CLIENTS", "64"));
        int poolSize = Integer.parseInt(env("POOL", "16"));
        int warmup = Integer.parseInt(env("WARMUP_S", "10"));
        int seconds = Integer.parseInt(env("SECONDS", "10"));
        int timeout = Integer.parseInt(env("BACKEND_TIMEOUT_MS", null));
        JedisPoolConfig config = new JedisPoolConfig();
        config.setMaxTotal(poolSize);
        config.setMaxIdle(poolSize);
        config.setMaxWait(Duration.ofMillis(timeout));
        config.setTestOnBorrow(false);
        config.setTestWhileIdle(false);
        config.setTimeBetweenEvictionRuns(Duration.ofMillis(-1));
        config.setJmxEnabled(false);
        DefaultJedisClientConfig client = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(timeout).socketTimeoutMillis(timeout)
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED).serverDefaultProtocol().build();
        JedisPool pool = new JedisPool(config,
                new HostAndPort(env("REDIS_HOST", null), Integer.parseInt(env("REDIS_PORT", null))), client);
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
                        try (Jedis jedis = pool.getResource()) {
                            jedis.getConnection().setSoTimeout(timeout);
                            int id = ThreadLocalRandom.current().nextInt(1, 10_001);
                            byte[] v = jedis.get(("greeting:" + id).getBytes(StandardCharsets.US_ASCII));
                            if (v != null) done.incrementAndGet(); else failed.incrementAndGet();
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
        System.out.printf("%d clients, pool %d: %,.0f GET/s, %.1f µs CPU per GET, %d failed%n",
                clients, poolSize, n * 1e9 / t, cpu / 1e3 / n, failed.get());
        System.exit(0);
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
