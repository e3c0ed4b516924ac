package dev.reference.tomcat.internals;

import java.sql.Connection;
import java.sql.SQLException;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.pool.HikariPool;

/**
 * A HikariCP borrow with its timeout given per call. {@code DataSource.getConnection()} always waits
 * Hikari's {@code connectionTimeout} (= BACKEND_TIMEOUT_MS) whatever the request's turn had used, so a
 * request admitted late while the pool replaces a connection (after a frozen MariaDB: every connection
 * at once) answered 503 at up to twice the budget. {@code HikariPool.getConnection(long hardTimeout)} is
 * the same borrow with the timeout as an argument; Boot's {@code HikariDataSource} hands out its pool
 * only as the {@code HikariPoolMXBean} interface, and that is the class behind it.
 */
public final class HikariBorrow {

    private HikariBorrow() {
    }

    /** A connection within {@code timeoutMillis}; before the pool has started, Hikari's own borrow starts it. */
    public static Connection within(HikariDataSource dataSource, long timeoutMillis) throws SQLException {
        // Workaround: the pool class behind the MXBean, for a per-call borrow timeout (README, Workarounds)
        if (dataSource.getHikariPoolMXBean() instanceof HikariPool pool) {
            return pool.getConnection(timeoutMillis);
        }
        return dataSource.getConnection();
    }
}
