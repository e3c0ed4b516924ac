package javatio;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.NoSuchElementException;

import org.apache.commons.pool2.impl.GenericObjectPoolConfig;

import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;
import redis.clients.jedis.exceptions.JedisConnectionException;

/** Jedis through a fixed-size JedisPool; one blocking GET per request on the calling (virtual) thread. */
final class RedisStore implements Store {
    private final JedisPool pool;
    private final int size;

    RedisStore(String host, int port, int timeoutMs, int size) {
        this.size = size;
        GenericObjectPoolConfig<Jedis> cfg = new GenericObjectPoolConfig<>();
        cfg.setMaxTotal(size);
        cfg.setMaxIdle(size);
        cfg.setMinIdle(size);
        cfg.setBlockWhenExhausted(true);
        cfg.setMaxWait(Duration.ofMillis(timeoutMs));
        cfg.setTestOnBorrow(false);      // no PING per request: a dead connection fails the GET and is dropped
        cfg.setTestOnReturn(false);
        cfg.setTestWhileIdle(false);
        cfg.setTimeBetweenEvictionRuns(Duration.ofMillis(-1));
        cfg.setJmxEnabled(false);
        DefaultJedisClientConfig client = DefaultJedisClientConfig.builder()
                .connectionTimeoutMillis(timeoutMs)
                .socketTimeoutMillis(timeoutMs)
                .clientSetInfoConfig(ClientSetInfoConfig.DISABLED) // no CLIENT SETINFO round trips on connect
                .autoNegotiateProtocol(false)                       // no HELLO on connect: plain RESP2
                .build();
        this.pool = new JedisPool(cfg, new HostAndPort(host, port), client);
    }

    @Override
    public void warm() throws Exception {
        pool.addObjects(size);
    }

    @Override
    public byte[] get(int id, long deadline) throws Exception {
        long left = Store.remainingMs(deadline);
        if (left <= 0) {
            throw new Unavailable("redis: no time left", null);
        }
        Jedis jedis;
        try {
            jedis = pool.borrowObject(Duration.ofMillis(left));
        } catch (NoSuchElementException e) {
            throw new Unavailable("redis: pool wait", e);
        } catch (Exception e) {
            // creating a connection failed (refused / connect timeout)
            throw new Unavailable("redis: connect", e);
        }
        try {
            left = Store.remainingMs(deadline);
            if (left <= 0) {
                pool.returnResource(jedis);
                throw new Unavailable("redis: no time left after pool wait", null);
            }
            // read timeout = what is left of the budget (a field on the socket, no system call)
            jedis.getConnection().setSoTimeout((int) left);
            byte[] value = jedis.get(("greeting:" + id).getBytes(StandardCharsets.US_ASCII));
            pool.returnResource(jedis);
            return value;
        } catch (JedisConnectionException e) {
            // timed out or broken: the connection may still get a late reply, so it is destroyed,
            // never reused; idle ones are dropped too (after a restart they are all dead)
            discard(jedis);
            pool.clear();
            throw new Unavailable("redis: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            discard(jedis);
            throw e;
        }
    }

    /**
     * Destroy a connection. commons-pool2 may open a replacement for a waiting borrower on the way
     * (invalidateObject -> addObject); with the server down that connect fails, which is not this
     * request's error.
     */
    private void discard(Jedis jedis) {
        try {
            pool.returnBrokenResource(jedis);
        } catch (RuntimeException ignored) {
            // the connection is closed either way
        }
    }
}
