package dev.reference.tomcat;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.core.NestedExceptionUtils;
import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * One Redis {@code GET greeting:<id>} per request through Boot's {@link StringRedisTemplate} on its
 * Jedis connection factory ({@code spring.data.redis.*}: a fixed pool, handed out in arrival order,
 * {@link RedisConfig}).
 *
 * <p>Timeouts, from BACKEND_TIMEOUT_MS: the pool wait ({@code jedis.pool.max-wait}) and the GET's read
 * ({@code spring.data.redis.timeout}) each get the whole budget, Spring Data Redis having no
 * per-command timeout; a request that waited for a connection can answer its 503 up to twice the budget
 * late (README, Limits). A connection that failed (reset, refused, timed out) is marked broken by
 * Jedis and destroyed when the template closes it, never reused: a late reply to a timed-out GET can
 * never be read as the answer to the next request. An error reply is a 500 (a busy one a 503), and
 * the connection, still in step, goes back to the pool.
 */
@Component
class RedisGreetings {

    private static final Logger log = LoggerFactory.getLogger(RedisGreetings.class);

    private final StringRedisTemplate redis;

    RedisGreetings(StringRedisTemplate redis, RedisConnectionFactory connections, DataRedisProperties properties) {
        this.redis = redis;
        warm(connections, properties.getJedis().getPool().getMaxActive());
    }

    /** Opens every pooled connection now (borrowed together, given back together), not in the first requests. */
    private static void warm(RedisConnectionFactory connections, int size) {
        List<RedisConnection> held = new ArrayList<>(size);
        try {
            for (int i = 0; i < size; i++) {
                held.add(connections.getConnection());
            }
        } catch (DataAccessException e) {
            log.warn("Redis not reachable at start ({}); connections will be opened on demand", e.toString());
        } finally {
            held.forEach(RedisConnection::close);
        }
    }

    /** The stored message, or null when the key does not exist. */
    String message(int id) {
        try {
            return redis.opsForValue().get("greeting:" + id);
        } catch (DataAccessResourceFailureException | QueryTimeoutException e) {
            // reset, refused, timed out, or no connection within the pool's wait: the connection is destroyed
            throw ContractError.unavailable(e);
        } catch (DataAccessException e) { // an error reply (-ERR, -NOPERM, ...): Redis is up and said no
            throw busy(NestedExceptionUtils.getMostSpecificCause(e).getMessage())
                    ? ContractError.unavailable(e) : ContractError.failed(e);
        }
    }

    private static final Set<String> BUSY = Set.of("LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN");

    /**
     * Redis's busy replies (CONTRACT.md, "Unavailable, busy, or an error"): the server is up but says it
     * cannot serve now (loading its dataset, running a script, its primary or cluster down). Unavailability:
     * 503. Jedis turns every error reply into a JedisDataException whose message is the reply's text.
     */
    static boolean busy(String reply) {
        if (reply == null) return false;
        int space = reply.indexOf(' ');
        return BUSY.contains(space < 0 ? reply : reply.substring(0, space));
    }
}
