package dev.reference.tomcat;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * The {@code backend.*} settings of application.properties, bound once at start (constructor binding:
 * a missing value is a failed start, not a zero). Redis and MariaDB are configured through Boot's own
 * {@code spring.data.redis.*} and {@code spring.datasource.*}; what remains is the budget every backend
 * call shares and xmemcached, for which Boot has no starter.
 *
 * @param timeout  BACKEND_TIMEOUT_MS: one budget for a whole backend call, pool wait included
 * @param memcache xmemcached's client
 * @param mysql    what /mysql does besides Boot's DataSource
 */
@ConfigurationProperties("backend")
record BackendProperties(Duration timeout, Memcache memcache, @DefaultValue Mysql mysql) {

    /** @param mistake BACKEND_MYSQL_MISTAKE: seed 000's mistake, shown on purpose (benchmarks only, README) */
    record Mysql(@DefaultValue("none") Mistake mistake) {
    }

    /** connection-per-request: a new MariaDB connection for every /mysql, no pool; any other value fails the start. */
    enum Mistake { NONE, CONNECTION_PER_REQUEST }

    /**
     * @param host         memcached's host
     * @param port         memcached's port
     * @param connections  sockets xmemcached multiplexes the gets over
     * @param healInterval how soon a lost connection is re-opened (times the attempt number)
     */
    record Memcache(String host, int port, int connections, Duration healInterval) {
    }
}
