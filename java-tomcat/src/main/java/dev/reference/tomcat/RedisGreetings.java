package dev.reference.tomcat;

import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;

import jakarta.annotation.PreDestroy;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.CommandObject;
import redis.clients.jedis.CommandObjects;
import redis.clients.jedis.Connection;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;
import redis.clients.jedis.RedisProtocol;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisDataException;
import redis.clients.jedis.exceptions.JedisException;
import redis.clients.jedis.util.Pool;

/**
 * One Redis {@code GET greeting:<id>} per request through Jedis's {@link RedisClient} (its pool of
 * {@code backend.redis.pool-size} connections, all opened at start).
 *
 * <p>Requests take their turn for a connection in arrival order ({@link FairAdmission}). Timeouts,
 * all from BACKEND_TIMEOUT_MS as one budget ({@link Deadline}): the turn takes what it needs, and the
 * GET reads with the socket timeout set to what is left. RedisClient itself has one socket timeout
 * for every command (its client config's, set when a connection opens) and one pool wait for every
 * borrow; so the GET carries a pre-process hook ({@link CommandObject#withPreProcessHook}, Jedis 8.0,
 * marked experimental), which RedisClient runs on the connection it borrowed right before sending the
 * command, and which sets that connection's SO_TIMEOUT to what is left (a spent budget: a 503 before
 * anything is sent). The pool's own wait (maxWait = the budget) is a backstop the turn never reaches:
 * a request gives its permit back only after RedisClient has returned its connection, so a turn
 * begins with at most 15 of the 16 out.
 *
 * <p>A connection that failed (reset, refused, timed out) is marked broken by Jedis and destroyed when
 * RedisClient closes it, never reused: a late reply to a timed-out GET can never be read as the
 * answer to the next request. A failure that is not a timeout means the server went away, so every
 * idle connection is dropped too (they are as dead as this one) and the next request connects anew:
 * recovery without a restart and without PINGs on borrow. An error reply is a 500 (a busy one a
 * 503), and the connection, still in step, goes back to the pool.
 */
@Component
class RedisGreetings {

    private static final Logger log = LoggerFactory.getLogger(RedisGreetings.class);

    /** The GET as RedisClient builds it; RESP2, the protocol these connections speak (no HELLO). */
    private static final CommandObjects COMMANDS = new CommandObjects(RedisProtocol.RESP2);

    private final RedisClient client;
    private final FairAdmission admission;
    private final long timeoutMillis;

    RedisGreetings(@Value("${backend.redis.host}") String host,
                   @Value("${backend.redis.port}") int port,
                   @Value("${backend.timeout-ms}") int timeoutMillis,
                   @Value("${backend.redis.pool-size}") int poolSize) {
        this.timeoutMillis = timeoutMillis;
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(poolSize);
        pool.setMaxIdle(poolSize);
        // minIdle stays 0 (no refill of its own); the pool is filled once below. commons-pool 2.13
        // replaces a destroyed connection at once anyway (invalidateObject then addObject), inside
        // the failing request: refused at once while Redis is down, accepted at once while it is frozen.
        pool.setMaxWait(Duration.ofMillis(timeoutMillis)); // a backstop: the turn leaves a connection free
        pool.setTestOnBorrow(false);            // no PING per request
        pool.setTestWhileIdle(false);           // ConnectionPoolConfig's default is true, every 30 s
        pool.setTimeBetweenEvictionRuns(Duration.ofMillis(-1)); // no evictor thread: the pool is fixed-size
        pool.setJmxEnabled(false);
        this.client = RedisClient.builder()
                .hostAndPort(host, port)
                .clientConfig(DefaultJedisClientConfig.builder()
                        .connectionTimeoutMillis(timeoutMillis)
                        .socketTimeoutMillis(timeoutMillis) // each GET sets what is left of its budget
                        .clientSetInfoConfig(ClientSetInfoConfig.DISABLED) // no CLIENT SETINFO round trips on connect
                        .serverDefaultProtocol() // no HELLO on connect: the server's RESP2
                        .build())
                .poolConfig(pool)
                .build();
        this.admission = new FairAdmission(poolSize);
        warm(poolSize);
    }

    /**
     * Opens every connection now, not during the first requests. RedisClient's build has opened one
     * already (it borrows a connection to learn the protocol when the config names none).
     */
    private void warm(int poolSize) {
        Pool<Connection> pool = client.getPool();
        try {
            pool.addObjects(poolSize - pool.getNumIdle());
        } catch (RuntimeException e) {
            log.warn("Redis not reachable at start ({}); connections will be opened on demand", e.toString());
        }
    }

    /** The stored message bytes, or null when the key does not exist. */
    byte[] message(int id) {
        Deadline deadline = Deadline.in(timeoutMillis);
        return admission.inTurn(deadline, () -> get(id, deadline));
    }

    private byte[] get(int id, Deadline deadline) {
        // Workaround: SO_TIMEOUT set per GET through the pre-process hook (README, Workarounds)
        CommandObject<byte[]> get = COMMANDS.get(("greeting:" + id).getBytes(StandardCharsets.US_ASCII))
                .withPreProcessHook(connection -> connection.setSoTimeout(deadline.remainingMillis()));
        try {
            return client.executeCommand(get);
        } catch (JedisDataException e) { // an error reply (-ERR, -NOPERM, ...): Redis is up and said no
            // the connection is still in step either way: RedisClient has returned it to the pool
            throw busy(e.getMessage()) ? ContractError.unavailable(e) : ContractError.failed(e);
        } catch (JedisConnectionException e) { // reset, refused, timed out: the connection is destroyed
            if (!(e.getCause() instanceof SocketTimeoutException)) {
                clearIdle(); // the server went away: its other idle connections are dead as well
            }
            throw ContractError.unavailable(e);
        } catch (JedisException e) { // no connection within the pool's wait, or one not given back
            throw ContractError.unavailable(e);
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

    private void clearIdle() {
        try {
            client.getPool().clear();
        } catch (RuntimeException e) {
            log.debug("clearing idle Redis connections failed: {}", e.toString());
        }
    }

    @PreDestroy
    void close() {
        client.close();
    }
}
