package dev.reference.tomcat;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.concurrent.Executor;

import com.zaxxer.hikari.HikariDataSource;
import org.mariadb.jdbc.Configuration;
import org.mariadb.jdbc.HostAddress;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;

import dev.reference.tomcat.internals.HikariBorrow;

/**
 * One prepared {@code SELECT id, message FROM greeting WHERE id = ?} per request through the
 * HikariCP DataSource that Spring Boot builds from {@code spring.datasource.*} and
 * {@code spring.datasource.hikari.*} (application.properties) and MariaDB Connector/J.
 *
 * <p>A request borrows a connection in HikariCP's own order, waiting at most its budget: see
 * {@link #borrow}. The JDBC network timeout of the borrowed connection is then set to what is left of the budget
 * (Hikari puts the default back when the connection is returned). The driver closes a connection
 * whose read timed out and Hikari evicts connections that failed with a connection-class SQLState
 * (08xxx), so a late reply is never read by the next request and the pool refills by itself.
 *
 * <p>An error MariaDB answers (a missing table, a syntax error) is not an outage: it is a 500, and
 * the connection stays in the pool.
 *
 * <p>No test query: Hikari checks connections idle for more than 500 ms with JDBC4
 * {@code isValid()}, which Connector/J implements as COM_PING, not a SELECT, so the verifier's
 * Com_select count sees only the one read per request.
 */
@Component
class MysqlGreetings {

    private static final Logger log = LoggerFactory.getLogger(MysqlGreetings.class);
    private static final String SQL = "SELECT id, message FROM greeting WHERE id = ?";
    /** setNetworkTimeout's executor; Connector/J does not use it (the timeout is the socket's SO_TIMEOUT). */
    private static final Executor DIRECT = Runnable::run;
    private static final SQLException NOT_STARTED = new SQLTransientConnectionException("MariaDB not reachable yet");

    private final HikariDataSource dataSource;
    private final long timeoutMillis;
    private final boolean connectionPerRequest;
    private final PoolStartGate gate;

    MysqlGreetings(HikariDataSource dataSource, BackendProperties backend) throws SQLException {
        this.dataSource = dataSource;
        this.timeoutMillis = backend.timeout().toMillis();
        this.connectionPerRequest = backend.mysql().mistake() == BackendProperties.Mistake.CONNECTION_PER_REQUEST;
        if (connectionPerRequest) {
            log.warn("BACKEND_MYSQL_MISTAKE=connection-per-request: /mysql opens a connection per request, no pool (benchmarks only)");
        }
        HostAddress server = Configuration.parse(dataSource.getJdbcUrl()).addresses().getFirst();
        // Workaround: the pool starts only once MariaDB accepts a connection (README, Workarounds)
        this.gate = new PoolStartGate(server.host, server.port, 100, this::start);
        gate.open();
    }

    /**
     * Boot's HikariDataSource starts its pool on the first borrow; borrowing once here starts it now,
     * and the pool then opens its minimumIdle connections in the background, before any request.
     * A MariaDB that is down is no reason not to start: {@link PoolStartGate} runs this once it is
     * back, and requests answer 503 until then (and, should this borrow fail, until the pool's own
     * retries succeed: initializationFailTimeout=-1).
     */
    private void start() {
        try (Connection ignored = dataSource.getConnection()) {
            log.debug("MariaDB pool started");
        } catch (SQLException e) {
            log.warn("MariaDB not reachable at start ({}); the pool keeps trying", e.toString());
        }
    }

    /** The stored message bytes (utf8mb4 on the wire, as stored), or null when there is no such row. */
    byte[] message(int id) {
        if (!gate.started()) { // MariaDB has not been reachable since the start: no pool yet
            throw ContractError.unavailable(NOT_STARTED);
        }
        Deadline deadline = Deadline.in(timeoutMillis);
        Connection connection;
        try {
            connection = borrow(deadline);
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
            throw ContractError.failed(e);
        }
    }

    /**
     * A connection within what is left of the budget ({@link HikariBorrow}: Hikari's DataSource waits
     * its connectionTimeout whatever the request had used). The borrow can still overrun by one
     * validation of an idle connection, at most {@code validation-timeout} (250 ms), when one starts
     * just before the deadline. With the seed's mistake on, a new connection instead (the URL's
     * connectTimeout bounds it), closed after the query.
     */
    private Connection borrow(Deadline deadline) throws SQLException {
        int left = deadline.remainingMillis(); // a spent budget is a 503 here, before any borrow
        if (connectionPerRequest) {
            return DriverManager.getConnection(dataSource.getJdbcUrl(), dataSource.getUsername(), dataSource.getPassword());
        }
        return HikariBorrow.within(dataSource, left);
    }

    private static boolean unavailable(SQLException e) {
        String state = e.getSQLState();
        return e instanceof SQLTransientConnectionException || e instanceof SQLTimeoutException
                || (state != null && state.startsWith("08"));
    }
}
