package javanetty;

/** What every connection handler shares: the three backends and the deadline. */
final class App {
    final Backend redis;
    final Backend mysql;
    final Backend memcache;
    final int timeoutMs;

    App(Backend redis, Backend mysql, Backend memcache, int timeoutMs) {
        this.redis = redis;
        this.mysql = mysql;
        this.memcache = memcache;
        this.timeoutMs = timeoutMs;
    }
}
