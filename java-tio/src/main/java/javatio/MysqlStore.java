package javatio;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

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
        c.setJdbcUrl("jdbc:mariadb://" + host + ":" + port + "/" + db);
        c.setUsername(user);
        c.setPassword(password);
        c.setMaximumPoolSize(size);
        c.setMinimumIdle(size);                         // fixed size
        c.setConnectionTimeout(Math.max(250, timeoutMs)); // pool wait bound (HikariCP's minimum is 250 ms)
        c.setValidationTimeout(250);                    // isValid() -> COM_PING, never a SELECT
        c.setAutoCommit(true);
        // Connector/J 4 asks for TLS by default and refuses a server without it; the harness's MariaDB on
        // loopback has none. Connector/J always talks utf8mb4; its timeouts in ms
        c.addDataSourceProperty("sslMode", "disable");
        c.addDataSourceProperty("connectTimeout", Integer.toString(timeoutMs));
        c.addDataSourceProperty("socketTimeout", Integer.toString(timeoutMs));
        this.ds = new HikariDataSource(c);
    }

    @Override
    public void warm() throws Exception {
        // borrow every connection at once so that the pool is full before the first request
        List<Connection> held = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                held.add(ds.getConnection());
            }
        } finally {
            for (Connection c : held) {
                c.close();
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

    private static boolean isConnectivity(SQLException e) {
        String state = e.getSQLState();
        return e instanceof SQLTransientConnectionException || e instanceof SQLNonTransientConnectionException
                || e instanceof SQLTimeoutException || e instanceof SQLRecoverableException
                || (state != null && state.startsWith("08"));
    }
}
