package dev.reference.tomcat;

import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import jakarta.annotation.PreDestroy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.JedisPoolConfig;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;

/**
 * One Redis {@code GET greeting:<id>} per request through a fixed-size JedisPool.
 *
 * <p>Requests take their turn for a connection in arrival order ({@link FairAdmission}). Timeouts,
 * all from BACKEND_TIMEOUT_MS: the turn and the pool wait share the budget, then the socket read
 * timeout is set to what is left of it. A connection that failed (reset, refused, timed out)
 * is destroyed, never returned: a late reply to a timed-out GET can therefore never be read as the
 * answer to the next request. A failure that is not a timeout means the server went away, so every
 * idle connection is dropped too (they are as dead as this one) and the next request connects anew:
 * recovery without a restart and without PINGs on borrow. An error reply is a 500, and the
 * connection, still in step, goes back to the pool.
 */
@Component
class RedisGreetings {

    private static final Logger log = LoggerFactory.getLogger(RedisGreetings.class);

    private final JedisPool pool;
    private final FairAdmission admission;
    private final long timeoutMillis;

    RedisGreetings(@Value("${backend.redis.host}") String host,
                   @Value("${backend.redis.port}") int port,
                   @Value("${backend.timeout-ms}") int timeoutMillis,
                   @Value("${backend.redis.pool-size}") int poolSize) {
        this.timeoutMillis = timeoutMillis;
        JedisPoolConfig config = new JedisPoolConfig();
        config.setMaxTotal(poolSize);
        config.setMaxIdle(poolSize);
        // minIdle stays 0: with it, every invalidated (broken) connection would be replaced at once
        // inside the failing request, i.e. a connect attempt to a server that just went away.
        // The pool is filled once below instead.
        config.setMaxWait(Duration.ofMillis(timeoutMillis));
        config.setTestOnBorrow(false);            // no PING per request
        config.setTestWhileIdle(false);
        config.setTimeBetweenEvictionRuns(Duration.ofMillis(-1)); // no evictor thread: the pool is fixed-size
        config.setJmxEnabled(false);
        DefaultJedisClientConfig client = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(timeoutMillis)
                .socketTimeoutMillis(timeoutMillis)
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED) // no CLIENT SETINFO round trips on connect
                .serverDefaultProtocol() // no HELLO on connect: the server's RESP2, which JedisPool speaks
                .build();
        this.pool = new JedisPool(config, new HostAndPort(host, port), client);
        this.admission = new FairAdmission(poolSize);
        warm(poolSize);
    }

    /** Opens every connection now, not during the first requests (they are idle in the pool after). */
    private void warm(int poolSize) {
        List<Jedis> opened = new ArrayList<>();
        try {
            for (int i = 0; i < poolSize; i++) {
                opened.add(pool.borrowObject(Duration.ofMillis(timeoutMillis)));
            }
        } catch (Exception e) {
            log.warn("Redis not reachable at start ({}); connections will be opened on demand", e.toString());
        } finally {
            opened.forEach(pool::returnResource);
        }
    }

    /** The stored message bytes, or null when the key does not exist. */
    byte[] message(int id) {
        Deadline deadline = Deadline.in(timeoutMillis);
        return admission.inTurn(deadline, () -> get(id, deadline));
    }

    private byte[] get(int id, Deadline deadline) {
        Jedis jedis;
        try {
            jedis = pool.borrowObject(Duration.ofMillis(deadline.remainingMillis()));
        } catch (Exception e) { // pool wait timed out, or a new connection could not be opened
            throw ContractError.unavailable(e);
        }
        boolean broken = false;
        try {
            jedis.getConnection().setSoTimeout(deadline.remainingMillis());
            return jedis.get(("greeting:" + id).getBytes(StandardCharsets.US_ASCII));
        } catch (JedisConnectionException e) {
            broken = true;
            if (!(e.getCause() instanceof SocketTimeoutException)) {
                clearIdle(); // the server went away: its other idle connections are dead as well
            }
            throw ContractError.unavailable(e);
        } catch (JedisDataException e) { // an error reply (-ERR, -NOPERM, ...): Redis is up and said no
            // the connection is still in step either way: it goes back to the pool
            throw busy(e.getMessage()) ? ContractError.unavailable(e) : ContractError.failed(e);
        } finally {
            giveBack(jedis, broken || jedis.isBroken());
        }
    }

    private static final Set<String> BUSY = Set.of("LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN");

    /**
     * Redis's busy replies (CONTRACT.md, "Unavailable, busy, or an error"): the server is up but says it
     * cannot serve now (loading its dataset, running a script, its primary or cluster down). Unavailability:
     * 503. Jedis turns every error reply, these included, into a JedisDataException (BUSY and CLUSTERDOWN
     * into its subclasses), whose message is the reply's text.
     */
    static boolean busy(String reply) {
        if (reply == null) return false;
        int space = reply.indexOf(' ');
        return BUSY.contains(space < 0 ? reply : reply.substring(0, space));
    }

    /** Returning a connection must never turn the answer into a 500. */
    private void giveBack(Jedis jedis, boolean broken) {
        try {
            if (broken) {
                pool.returnBrokenResource(jedis);
            } else {
                pool.returnResource(jedis);
            }
        } catch (RuntimeException e) {
            log.debug("returning a Redis connection failed: {}", e.toString());
        }
    }

    private void clearIdle() {
        try {
            pool.clear();
        } catch (RuntimeException e) {
            log.debug("clearing idle Redis connections failed: {}", e.toString());
        }
    }

    @PreDestroy
    void close() {
        pool.close();
    }
}
