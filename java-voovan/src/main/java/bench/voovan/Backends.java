package bench.voovan;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;
import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.exception.MemcachedClientException;
import net.rubyeye.xmemcached.exception.MemcachedException;
import net.rubyeye.xmemcached.exception.MemcachedServerException;
import net.rubyeye.xmemcached.transcoders.CachedData;
import net.rubyeye.xmemcached.transcoders.CompressionMode;
import net.rubyeye.xmemcached.transcoders.Transcoder;
import net.rubyeye.xmemcached.utils.AddrUtil;

import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The three backends. A read is started on Voovan's IO thread and never blocks it: Redis through
 * Lettuce's asynchronous API (its event loop answers), MariaDB and memcached through their blocking
 * drivers on a virtual thread each. Every read ends by BACKEND_TIMEOUT_MS after the request arrived,
 * pool wait included, through the drivers' own timeouts: a read answered 503 holds no connection after.
 */
final class Backends {
    private Backends() {}

    /**
     * Reads a backend has started and not finished (waiting for a connection or an answer); one more is
     * refused at once (503). Above the 1024 connections of the benchmark, so no benchmark meets it; it
     * bounds what a frozen backend makes pile up, each read for at most BACKEND_TIMEOUT_MS.
     */
    static final int MAX_WAITING = 4096;

    /** How a read ends: the message bytes (UTF-8; null when the id is not there), or a failure. */
    @FunctionalInterface
    interface Done {
        /** failure: null on success; {@link Unavailable} for 503 (down, refusing, too slow); anything else 500. */
        void done(byte[] message, Throwable failure);
    }

    interface Backend {
        /** Starts one read; deadline is System.nanoTime() by which it must end. */
        void get(int id, long deadline, Done done);
    }

    /** The backend is down, refuses, did not answer in time, or too many reads wait: 503. */
    static final class Unavailable extends Exception {
        Unavailable(String what, Throwable cause) {
            super(what, cause, false, false);
        }
    }

    static long remainingMs(long deadline) {
        return (deadline - System.nanoTime()) / 1_000_000L;
    }

    /**
     * Redis through Lettuce: one connection shared by every request (thread-safe, pipelined: commands
     * issued while others are in flight leave in one write, their replies come in one read). Replies are
     * paired with commands by Lettuce's in-order command stack, timed-out ones included, so a late reply
     * after a freeze is consumed by its own command: no desync.
     */
    static final class Redis implements Backend {
        private final RedisAsyncCommands<String, byte[]> commands;

        Redis(String host, int port, int timeoutMs) {
            Duration timeout = Duration.ofMillis(timeoutMs);
            ClientResources resources = DefaultClientResources.builder()
                    .ioThreadPoolSize(1)          // one connection: one event loop
                    .computationThreadPoolSize(1) // timeouts and reconnects only
                    // a Redis that comes back is found within 100 ms (the contract allows 2 s)
                    .reconnectDelay(Delay.exponential(Duration.ofMillis(5), Duration.ofMillis(100), 2, TimeUnit.MILLISECONDS))
                    .build();
            RedisClient client = RedisClient.create(resources,
                    RedisURI.builder().withHost(host).withPort(port).withTimeout(timeout).build());
            client.setOptions(ClientOptions.builder()
                    .protocolVersion(ProtocolVersion.RESP2) // no HELLO on connect
                    .autoReconnect(true)
                    // not connected: fail at once (503) instead of buffering commands until Redis returns
                    .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                    // commands in flight are bounded (Lettuce's default is unbounded): past this Lettuce
                    // refuses new ones at once (503), e.g. while Redis is frozen
                    .requestQueueSize(MAX_WAITING)
                    .timeoutOptions(TimeoutOptions.enabled(timeout))
                    .socketOptions(SocketOptions.builder().connectTimeout(timeout).tcpNoDelay(true).build())
                    .build());
            commands = client.connect(RedisCodec.of(StringCodec.ASCII, ByteArrayCodec.INSTANCE)).async();
        }

        @Override
        public void get(int id, long deadline, Done done) {
            commands.get("greeting:" + id).whenComplete((value, failure) ->
                    done.done(value, failure == null ? null : classify(failure)));
        }

        /**
         * An error reply (e.g. ERR, NOPERM) is Redis answering: 500, unless it is a busy reply. Not
         * connected, timed out, queue full, busy: 503.
         */
        private static Throwable classify(Throwable failure) {
            for (Throwable t = failure; t != null; t = t.getCause()) {
                if (t instanceof RedisCommandExecutionException) {
                    return busy(t.getMessage()) ? new Unavailable("redis: " + t.getMessage(), failure) : failure;
                }
                if (t instanceof RedisException || t instanceof IOException || t instanceof TimeoutException) {
                    return new Unavailable("redis: " + t.getMessage(), failure);
                }
            }
            return failure;
        }

        private static final Set<String> BUSY = Set.of("LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN");

        /**
         * Redis's busy replies (CONTRACT.md, "Unavailable, busy, or an error"): the server is up but says it
         * cannot serve now (loading its dataset, running a script, its primary or cluster down). Unavailability:
         * 503. Lettuce turns every error reply, these included, into a RedisCommandExecutionException
         * (LOADING and BUSY into its subclasses), whose message is the reply's text.
         */
        static boolean busy(String reply) {
            if (reply == null) return false;
            int space = reply.indexOf(' ');
            return BUSY.contains(space < 0 ? reply : reply.substring(0, space));
        }
    }

    /** A blocking driver: each read on its own thread from {@code executor}, at most MAX_WAITING at once. */
    abstract static class Blocking implements Backend {
        private final Executor executor;
        private final Semaphore waiting = new Semaphore(MAX_WAITING);

        Blocking(Executor executor) {
            this.executor = executor;
        }

        /** The blocking read: returns the message (null: not there) or throws (Unavailable: 503). */
        abstract byte[] read(int id, long deadline) throws Exception;

        @Override
        public final void get(int id, long deadline, Done done) {
            if (!waiting.tryAcquire()) {
                done.done(null, new Unavailable(getClass().getSimpleName() + ": " + MAX_WAITING + " reads waiting", null));
                return;
            }
            executor.execute(() -> {
                byte[] message;
                try {
                    message = read(id, deadline);
                } catch (Throwable t) {
                    waiting.release();
                    done.done(null, t);
                    return;
                }
                waiting.release();
                done.done(message, null);
            });
        }
    }

    /** HikariCP (fixed size, validated with JDBC4 isValid = COM_PING) over MariaDB Connector/J. */
    static final class Mysql extends Blocking {
        private static final String SQL = "SELECT id, message FROM greeting WHERE id = ?";
        private final HikariDataSource ds;

        Mysql(String host, int port, String user, String password, String database, int timeoutMs, int poolSize,
              Executor executor) {
            super(executor);
            HikariConfig cfg = new HikariConfig();
            cfg.setJdbcUrl("jdbc:mariadb://" + host + ":" + port + "/" + database);
            // Connector/J 4 asks for TLS by default and refuses a server without it; the harness's MariaDB
            // on loopback has none
            cfg.addDataSourceProperty("sslMode", "disable");
            cfg.addDataSourceProperty("connectTimeout", Integer.toString(timeoutMs));
            cfg.addDataSourceProperty("socketTimeout", Integer.toString(timeoutMs));
            // binary protocol: prepared once per connection (cached by the driver), then only
            // COM_STMT_EXECUTE per request; the default sends the SQL text every time
            cfg.addDataSourceProperty("useServerPrepStmts", "true");
            cfg.addDataSourceProperty("cachePrepStmts", "true");
            cfg.setUsername(user);
            cfg.setPassword(password);
            cfg.setMaximumPoolSize(poolSize);
            cfg.setMinimumIdle(poolSize);                     // fixed size, warmed at start
            cfg.setConnectionTimeout(Math.max(250, timeoutMs)); // pool wait (HikariCP's minimum is 250 ms)
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
        byte[] read(int id, long deadline) throws Exception {
            Connection c;
            try {
                c = ds.getConnection(); // waits at most connectionTimeout = BACKEND_TIMEOUT_MS
            } catch (SQLException e) {
                throw new Unavailable("mysql: pool", e);
            }
            try {
                long left = remainingMs(deadline);
                if (left <= 0) throw new Unavailable("mysql: no time left after the pool wait", null);
                c.setNetworkTimeout(Runnable::run, (int) left); // HikariCP restores the pool's value on close
                try (PreparedStatement ps = c.prepareStatement(SQL)) {
                    ps.setInt(1, id);
                    try (ResultSet rs = ps.executeQuery()) {
                        return rs.next() ? rs.getBytes(2) : null;
                    }
                }
            } catch (SQLException e) {
                if (isConnectivity(e)) {
                    ds.evictConnection(c); // a late reply could still be on its way: never hand it out again
                    throw new Unavailable("mysql: " + e.getMessage(), e);
                }
                throw e; // MariaDB answered with an error (e.g. 1146, no such table): 500, the connection stays
            } finally {
                c.close();
            }
        }

        private static boolean isConnectivity(SQLException e) {
            String state = e.getSQLState();
            return e instanceof SQLTransientConnectionException || e instanceof SQLNonTransientConnectionException
                    || e instanceof SQLTimeoutException || e instanceof SQLRecoverableException
                    || (state != null && state.startsWith("08"));
        }
    }

    /** xmemcached: NIO, its connections multiplexed by every caller; get() waits on a latch for the reply. */
    static final class Memcache extends Blocking {
        private final MemcachedClient client;

        Memcache(String host, int port, int timeoutMs, int connections, Executor executor) throws Exception {
            super(executor);
            XMemcachedClientBuilder b = new XMemcachedClientBuilder(AddrUtil.getAddresses(host + ":" + port));
            b.setConnectionPoolSize(connections);
            b.setConnectTimeout(timeoutMs);
            b.setOpTimeout(timeoutMs);
            b.setHealSessionInterval(100);                    // reconnect fast after an outage (default 2 s)
            b.setEnableHealSession(true);
            b.setFailureMode(false);
            client = b.build();
            client.setEnableHeartBeat(false);
            client.setOptimizeGet(false);                     // one get per request, never merged into a multi-get
            // A get that timed out leaves its connection with a reply pending: close that connection
            // at the first timeout (default: after 1000) so it is never reused; the heal thread reconnects.
            client.setTimeoutExceptionThreshold(1);
        }

        @Override
        byte[] read(int id, long deadline) throws Exception {
            long left = remainingMs(deadline);
            if (left <= 0) throw new Unavailable("memcache: no time left", null);
            try {
                return client.get("greeting:" + id, left, RAW);
            } catch (TimeoutException e) {
                throw new Unavailable("memcache: timeout", e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new Unavailable("memcache: interrupted", e);
            } catch (MemcachedServerException | MemcachedClientException e) {
                throw e; // memcached answered with an error: 500
            } catch (MemcachedException e) {
                throw new Unavailable("memcache: " + e.getMessage(), e); // no connection
            }
        }

        /** The stored bytes as they are (flags 0, UTF-8 text): no decoding to a String and back. */
        private static final Transcoder<byte[]> RAW = new Transcoder<>() {
            @Override public CachedData encode(byte[] o) { return new CachedData(0, o); }
            @Override public byte[] decode(CachedData d) { return d.getData(); }
            @Override public void setPrimitiveAsString(boolean b) {}
            @Override public void setPackZeros(boolean b) {}
            @Override public void setCompressionThreshold(int t) {}
            @Override public boolean isPrimitiveAsString() { return false; }
            @Override public boolean isPackZeros() { return false; }
            @Override public void setCompressionMode(CompressionMode m) {}
        };
    }
}
