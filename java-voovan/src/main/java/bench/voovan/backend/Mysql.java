package bench.voovan.backend;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Executor;

/**
 * HikariCP (fixed size, validated with JDBC4 isValid = COM_PING) over MariaDB Connector/J. The pool is
 * opened once MariaDB has answered a connect: at start, or, when it is down then, by a thread that tries
 * again every 100 ms (until then every read is 503).
 */
public final class Mysql extends Blocking {
    private static final String SQL = "SELECT id, message FROM greeting WHERE id = ?";
    private static final long RETRY_MS = 100;
    private final HikariConfig cfg = new HikariConfig();
    private volatile HikariDataSource ds; // null until MariaDB first answered

    public Mysql(String host, int port, String user, String password, String database, int timeoutMs, int poolSize,
                 Executor executor) {
        super(executor);
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
        cfg.setMinimumIdle(poolSize);                     // fixed size, warmed when opened
        cfg.setConnectionTimeout(Math.max(250, timeoutMs)); // pool wait (HikariCP's minimum is 250 ms)
        cfg.setValidationTimeout(250);                    // the minimum Hikari accepts
        cfg.setInitializationFailTimeout(-1);             // a later outage: the pool stays, reads are 503
        cfg.setPoolName("mysql");
        // no connectionTestQuery: Hikari then uses JDBC4 isValid(), which the MariaDB driver
        // answers with COM_PING (no SELECT, so Com_select counts only our reads)
        if (!open()) {
            System.err.println("mysql: not reachable at start; trying every " + RETRY_MS + " ms, 503 until then");
            Thread.ofVirtual().name("mysql-open").start(() -> {
                while (!open()) {
                    try {
                        Thread.sleep(RETRY_MS);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
        }
    }

    /**
     * Opens and fills the pool if MariaDB answers a connect now. Not a pool started while MariaDB is
     * down: Hikari retries a failed connect with a backoff that doubles up to 5 s, so it could take
     * that long to find MariaDB back (HikariPool.PoolEntryCreator).
     */
    private boolean open() {
        // Workaround: Hikari's connect backoff grows to 5 s (README, Workarounds)
        Properties props = new Properties();
        props.putAll(cfg.getDataSourceProperties());
        props.setProperty("user", cfg.getUsername());
        props.setProperty("password", cfg.getPassword());
        try (Connection probe = DriverManager.getConnection(cfg.getJdbcUrl(), props)) {
            // answered
        } catch (SQLException e) {
            return false;
        }
        HikariDataSource pool = new HikariDataSource(cfg);
        // Hikari fills the pool in the background; wait for it (bounded) so that no connection set-up
        // happens during the first requests
        List<Connection> held = new ArrayList<>();
        try {
            for (int i = 0; i < cfg.getMaximumPoolSize(); i++) held.add(pool.getConnection());
        } catch (SQLException e) {
            System.err.println("mysql: could not fill the pool (" + e + ")");
        } finally {
            for (Connection c : held) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                }
            }
        }
        ds = pool;
        return true;
    }

    @Override
    byte[] read(int id, long deadline) throws Exception {
        HikariDataSource ds = this.ds;
        if (ds == null) throw new Unavailable("mysql: not connected yet", null);
        Connection c;
        try {
            c = ds.getConnection(); // waits at most connectionTimeout = BACKEND_TIMEOUT_MS
        } catch (SQLException e) {
            throw new Unavailable("mysql: pool", e);
        }
        try {
            long left = Backend.remainingMs(deadline);
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
