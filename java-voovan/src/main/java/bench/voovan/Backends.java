package bench.voovan;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.transcoders.StringTranscoder;
import net.rubyeye.xmemcached.utils.AddrUtil;
import org.apache.commons.pool2.impl.GenericObjectPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.JedisPool;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The three backends, each through its maintained blocking driver. Every call runs on a worker thread
 * (never on a Voovan IO thread); each driver's own timeouts are BACKEND_TIMEOUT_MS so a stuck call
 * frees its thread and its connection is thrown away (never reused with a late reply pending), while
 * the 503 itself is answered on time by the deadline in Main.
 */
final class Backends {
    /** One read: the stored message as UTF-8 bytes, or null when the id is not there. */
    interface Backend {
        byte[] get(int id) throws Exception;
    }

    private Backends() {}

    static final class Redis implements Backend {
        private final JedisPool pool;

        Redis(String host, int port, int timeoutMs, int poolSize) {
            GenericObjectPoolConfig<Jedis> cfg = new GenericObjectPoolConfig<>();
            cfg.setMaxTotal(poolSize);
            cfg.setMaxIdle(poolSize);
            cfg.setMinIdle(poolSize);                         // fixed size, opened at start
            cfg.setMaxWait(Duration.ofMillis(timeoutMs));     // pool wait bounded too
            cfg.setBlockWhenExhausted(true);
            cfg.setTestOnBorrow(false);                       // no PING per request
            cfg.setTestWhileIdle(false);
            cfg.setTimeBetweenEvictionRuns(Duration.ofMillis(-1));
            cfg.setJmxEnabled(false);
            DefaultJedisClientConfig client = DefaultJedisClientConfig.builder()
                    .connectionTimeoutMillis(timeoutMs)
                    .socketTimeoutMillis(timeoutMs)
                    .build();
            pool = new JedisPool(cfg, new HostAndPort(host, port), client);
        }

        void warm() {
            try {
                pool.preparePool();
            } catch (Exception e) {
                System.err.println("redis: could not open the pool at start (" + e + "); connections open on demand");
            }
        }

        @Override
        public byte[] get(int id) {
            // A JedisConnectionException (refused, timed out) marks the connection broken: close()
            // then destroys it instead of returning it to the pool.
            try (Jedis j = pool.getResource()) {
                return j.get(("greeting:" + id).getBytes(StandardCharsets.US_ASCII));
            }
        }
    }

    static final class Mysql implements Backend {
        private static final String SQL = "SELECT id, message FROM greeting WHERE id = ?";
        static final boolean SERVER_PREPARE = !"false".equals(System.getProperty("bench.serverPrepare"));
        private final HikariDataSource ds;

        Mysql(String host, int port, String user, String password, String database, int timeoutMs, int poolSize) {
            HikariConfig cfg = new HikariConfig();
            // utf8mb4 is the MariaDB connector's default; socketTimeout makes a frozen server's
            // connection fail (and be closed by the driver, then evicted by Hikari) after the deadline.
            cfg.setJdbcUrl("jdbc:mariadb://" + host + ":" + port + "/" + database
                    + "?connectTimeout=" + timeoutMs + "&socketTimeout=" + timeoutMs
                    // binary protocol: prepared once per connection (cached by the driver), then only
                    // COM_STMT_EXECUTE per request; the default sends the SQL text every time
                    + (SERVER_PREPARE ? "&useServerPrepStmts=true&cachePrepStmts=true" : ""));
            cfg.setUsername(user);
            cfg.setPassword(password);
            cfg.setMaximumPoolSize(poolSize);
            cfg.setMinimumIdle(poolSize);                     // fixed size, warmed at start
            cfg.setConnectionTimeout(timeoutMs);              // pool wait
            cfg.setValidationTimeout(250);                    // the minimum Hikari accepts
            cfg.setInitializationFailTimeout(-1);             // start even if MariaDB is not up yet
            cfg.setPoolName("mysql");
            // no connectionTestQuery: Hikari then uses JDBC4 isValid(), which the MariaDB driver
            // answers with COM_PING (no SELECT, so Com_select counts only our reads)
            ds = new HikariDataSource(cfg);
        }

        void warm(int poolSize) {
            // Hikari fills the pool in the background; wait for it (bounded) so no connection set-up
            // happens during the first requests.
            List<Connection> held = new ArrayList<>();
            try {
                for (int i = 0; i < poolSize; i++) held.add(ds.getConnection());
            } catch (Exception e) {
                System.err.println("mysql: could not open the pool at start (" + e + ")");
            } finally {
                for (Connection c : held) {
                    try {
                        c.close();
                    } catch (Exception ignored) {
                    }
                }
            }
        }

        @Override
        public byte[] get(int id) throws Exception {
            try (Connection c = ds.getConnection(); PreparedStatement ps = c.prepareStatement(SQL)) {
                ps.setInt(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    if (!rs.next()) return null;
                    return rs.getBytes(2);
                }
            }
        }
    }

    static final class Memcache implements Backend {
        private final MemcachedClient client;
        private final long timeoutMs;
        private final StringTranscoder utf8 = new StringTranscoder("UTF-8");

        Memcache(String host, int port, int timeoutMs, int connections) throws Exception {
            this.timeoutMs = timeoutMs;
            XMemcachedClientBuilder b = new XMemcachedClientBuilder(AddrUtil.getAddresses(host + ":" + port));
            b.setConnectionPoolSize(connections);
            b.setConnectTimeout(timeoutMs);
            b.setOpTimeout(timeoutMs);
            b.setHealSessionInterval(100);                    // reconnect fast after an outage (default 2 s)
            b.setEnableHealSession(true);
            b.setFailureMode(false);
            client = b.build();
            client.setEnableHeartBeat(false);
            // A get that timed out leaves its connection with a reply pending: close that connection
            // at the first timeout (default: after 1000) so it is never reused; the heal thread reconnects.
            client.setTimeoutExceptionThreshold(1);
        }

        @Override
        public byte[] get(int id) throws Exception {
            String v = client.get("greeting:" + id, timeoutMs, utf8);
            return v == null ? null : v.getBytes(StandardCharsets.UTF_8);
        }
    }
}
