package javatio;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.logging.Logger;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.mariadb.jdbc.MariaDbDataSource;

/** HikariCP (fixed size, validated with JDBC4 isValid = COM_PING) over MariaDB Connector/J. */
final class MysqlStore extends BlockingStore {
    static final String SQL = "SELECT id, message FROM greeting WHERE id = ?";
    private static final Executor DIRECT = Runnable::run;
    private final HikariDataSource ds;
    private final int size;

    MysqlStore(String host, int port, String user, String password, String db, int timeoutMs, int size,
               Executor executor) {
        super(executor);
        this.size = size;
        HikariConfig c = new HikariConfig();
        c.setPoolName("mysql");
        // Connector/J 4 asks for TLS by default and refuses a server without it; the harness's MariaDB on
        // loopback has none. Connector/J always talks utf8mb4; its timeouts in ms
        String url = "jdbc:mariadb://" + host + ":" + port + "/" + db + "?sslMode=disable&connectTimeout=" + timeoutMs
                + "&socketTimeout=" + timeoutMs;
        try {
            MariaDbDataSource mariadb = new MariaDbDataSource(url);
            mariadb.setUser(user);
            mariadb.setPassword(password);
            c.setDataSource(new Reconnecting(mariadb));
        } catch (SQLException e) {
            throw new IllegalStateException("MYSQL_*: " + e.getMessage(), e);
        }
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(size);                         // fixed size
        c.setConnectionTimeout(Math.max(250, timeoutMs)); // pool wait bound (HikariCP's minimum is 250 ms)
        c.setValidationTimeout(250);                    // isValid() -> COM_PING, never a SELECT
        c.setAutoCommit(true);
        // a MariaDB that is down is no reason not to start: the pool opens its connections when it can
        // (reads meanwhile answer 503)
        c.setInitializationFailTimeout(-1);
        this.ds = new HikariDataSource(c);
    }

    @Override
    public void warm() {
        // borrow every connection at once so that the pool is full before the first request
        List<Connection> held = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                held.add(ds.getConnection());
            }
        } catch (SQLException e) {
            System.err.println("java-tio: MariaDB not reachable at start (" + e.getMessage() + "); the pool keeps trying");
        } finally {
            for (Connection c : held) {
                try {
                    c.close();
                } catch (SQLException ignored) {
                    // returned to the pool; HikariCP evicts it if broken
                }
            }
        }
    }

    @Override
    byte[] read(int id, long deadline) throws Exception {
        Connection c;
        try {
            c = ds.getConnection();
        } catch (SQLException e) {
            throw new Unavailable("mysql: pool", e);
        }
        try {
            long left = Store.remainingMs(deadline);
            if (left <= 0) {
                throw new Unavailable("mysql: no time left after pool wait", null);
            }
            c.setNetworkTimeout(DIRECT, (int) left); // HikariCP restores the pool's value on close
            try (PreparedStatement ps = c.prepareStatement(SQL)) {
                ps.setInt(1, id);
                try (ResultSet rs = ps.executeQuery()) {
                    return rs.next() ? rs.getString(2).getBytes(StandardCharsets.UTF_8) : null;
                }
            }
        } catch (SQLException e) {
            if (isConnectivity(e)) {
                // never hand this connection out again: a late reply could still be on its way
                ds.evictConnection(c);
                throw new Unavailable("mysql: " + e.getMessage(), e);
            }
            throw e; // MariaDB answered with an error (e.g. 1146, no such table): 500, the connection stays
        } finally {
            c.close();
        }
    }

    /**
     * Connector/J's DataSource, except that a connection refused or timed out is tried again every
     * RETRY_MS instead of failing. HikariCP's connection adder sleeps between failed attempts with a
     * backoff doubling up to 5 s, so after an outage of a few seconds a MariaDB that is back would wait
     * up to 5 s for its first connection; the contract wants 200 within 2 s. Here the adder's thread waits
     * in this loop instead, and connects within RETRY_MS of MariaDB's return.
     */
    // Workaround: HikariCP's connection adder backs off up to 5 s after failures (README, Workarounds)
    private static final class Reconnecting implements DataSource {
        private static final long RETRY_MS = 50;
        private final DataSource ds;

        Reconnecting(DataSource ds) {
            this.ds = ds;
        }

        @Override
        public Connection getConnection() throws SQLException {
            while (true) {
                try {
                    return ds.getConnection();
                } catch (SQLException e) {
                    if (!isConnectivity(e)) {
                        throw e; // MariaDB answered (e.g. access denied): HikariCP reports it
                    }
                }
                try {
                    Thread.sleep(RETRY_MS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new SQLTransientConnectionException("interrupted while MariaDB was unreachable", e);
                }
            }
        }

        @Override public Connection getConnection(String user, String password) { throw new UnsupportedOperationException(); }
        @Override public PrintWriter getLogWriter() throws SQLException { return ds.getLogWriter(); }
        @Override public void setLogWriter(PrintWriter out) throws SQLException { ds.setLogWriter(out); }
        @Override public void setLoginTimeout(int seconds) throws SQLException { ds.setLoginTimeout(seconds); }
        @Override public int getLoginTimeout() throws SQLException { return ds.getLoginTimeout(); }
        @Override public Logger getParentLogger() throws SQLFeatureNotSupportedException { return ds.getParentLogger(); }
        @Override public <T> T unwrap(Class<T> iface) throws SQLException { return ds.unwrap(iface); }
        @Override public boolean isWrapperFor(Class<?> iface) throws SQLException { return ds.isWrapperFor(iface); }
    }

    private static boolean isConnectivity(SQLException e) {
        String state = e.getSQLState();
        return e instanceof SQLTransientConnectionException || e instanceof SQLNonTransientConnectionException
                || e instanceof SQLTimeoutException || e instanceof SQLRecoverableException
                || (state != null && state.startsWith("08"));
    }
}
