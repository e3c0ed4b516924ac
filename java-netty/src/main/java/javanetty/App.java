package javanetty;

/** What every connection handler shares: the three backends, the deadline, and how /sleep waits. */
final class App {
    final Backend redis;
    final Backend mysql;
    final Backend memcache;
    final int timeoutMs;
    /** SLEEP_MISTAKE=block-event-loop: /sleep blocks its event loop (benchmarks only, README). */
    final boolean sleepBlocksEventLoop;

    App(Backend redis, Backend mysql, Backend memcache, int timeoutMs) {
        this(redis, mysql, memcache, timeoutMs, false);
    }

    App(Backend redis, Backend mysql, Backend memcache, int timeoutMs, boolean sleepBlocksEventLoop) {
        this.redis = redis;
        this.mysql = mysql;
        this.memcache = memcache;
        this.timeoutMs = timeoutMs;
        this.sleepBlocksEventLoop = sleepBlocksEventLoop;
    }
}
