package bench.voovan;

import bench.voovan.backend.Backend;
import bench.voovan.backend.Memcache;
import bench.voovan.backend.Mysql;
import bench.voovan.backend.Redis;

import java.lang.management.ManagementFactory;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

/**
 * The stack's backend path without Voovan (NOTES.md, the /mysql notes): the very backend classes the stack uses
 * (client, pool, settings, deadline, a virtual thread per blocking read), driven by N chains, each
 * starting its next read of a random id when its last one ends, as N connections of a closed-loop
 * benchmark would. Prints reads/s and the process's CPU µs per read: what the client alone costs, which
 * a data request cannot go below.
 *
 * Configured like the stack, from the environment (shared-schema/defaults.env, VOOVAN_MYSQL_POOL and
 * VOOVAN_MEMCACHE_CONNECTIONS). Arguments: redis|mysql|memcache, chains, warm-up seconds, seconds.
 */
public final class ClientOnly {
    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: ClientOnly redis|mysql|memcache <chains> <warm-up s> <measured s>");
            System.exit(2);
        }
        int chains = Integer.parseInt(args[1]);
        long warmupNanos = Long.parseLong(args[2]) * 1_000_000_000L;
        long measureNanos = Long.parseLong(args[3]) * 1_000_000_000L;
        int timeoutMs = Env.requireInt("BACKEND_TIMEOUT_MS");
        Executor blocking = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("backend-", 0).factory());
        Backend backend = switch (args[0]) {
            case "redis" -> new Redis(Env.require("REDIS_HOST"), Env.requireInt("REDIS_PORT"), timeoutMs);
            case "mysql" -> new Mysql(Env.require("MYSQL_HOST"), Env.requireInt("MYSQL_PORT"),
                    Env.require("MYSQL_USER"), Env.require("MYSQL_PASSWORD"), Env.require("MYSQL_DATABASE"),
                    timeoutMs, Env.requireInt("VOOVAN_MYSQL_POOL"), blocking); // opened and warmed by its constructor
            case "memcache" -> new Memcache(Env.require("MEMCACHE_HOST"), Env.requireInt("MEMCACHE_PORT"),
                    timeoutMs, Env.requireInt("VOOVAN_MEMCACHE_CONNECTIONS"), blocking);
            default -> throw new IllegalArgumentException("not a backend: " + args[0]);
        };

        LongAdder reads = new LongAdder();
        LongAdder failures = new LongAdder();
        long timeoutNanos = timeoutMs * 1_000_000L;
        long end = System.nanoTime() + warmupNanos + measureNanos;
        for (int i = 0; i < chains; i++) {
            new Chain(backend, timeoutNanos, end, reads, failures).next();
        }
        Thread.sleep(warmupNanos / 1_000_000L);
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long reads0 = reads.sum(), failures0 = failures.sum(), cpu0 = os.getProcessCpuTime(), t0 = System.nanoTime();
        Thread.sleep(measureNanos / 1_000_000L);
        long n = reads.sum() - reads0, failed = failures.sum() - failures0;
        long cpu = os.getProcessCpuTime() - cpu0, elapsed = System.nanoTime() - t0;
        System.out.printf("%s chains=%d: %,.0f reads/s, %.1f CPU µs/read, %d failed, %.1f s%n", args[0], chains,
                n * 1e9 / elapsed, n == 0 ? 0.0 : cpu / 1e3 / n, failed, elapsed / 1e9);
        System.exit(failed == 0 && n > 0 ? 0 : 1);
    }

    /**
     * One closed-loop "connection": the next read starts on the thread that ended the last one. For Redis
     * that is Lettuce's event loop, one hand-off fewer than in the stack (where Voovan's IO thread issues
     * the GET): the figure is what the client costs at best.
     */
    private record Chain(Backend backend, long timeoutNanos, long end, LongAdder reads,
                         LongAdder failures) {
        void next() {
            if (System.nanoTime() >= end) return;
            int id = ThreadLocalRandom.current().nextInt(1, 10_001);
            backend.get(id, System.nanoTime() + timeoutNanos, (message, failure) -> {
                if (failure != null || message == null) {
                    failures.increment(); // the chain ends: a backend that fails at once must not recurse
                    return;
                }
                reads.increment();
                next();
            });
        }
    }
}
