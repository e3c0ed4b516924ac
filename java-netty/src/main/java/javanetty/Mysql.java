package javanetty;

import io.netty.channel.EventLoop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.net.NetClientOptions;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.PreparedQuery;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowIterator;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import io.vertx.sqlclient.impl.SocketConnectionBase;
import io.vertx.sqlclient.internal.Connection;
import io.vertx.sqlclient.internal.SqlConnectionInternal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * MariaDB through the Vert.x reactive MySQL client (Netty-based, binary protocol): a fixed pool
 * whose connections are all opened and given the prepared statement at start, so no request pays
 * for a connect or a COM_STMT_PREPARE and no validation query ever runs. The HTTP layer's timer
 * answers 503 at BACKEND_TIMEOUT_MS; here nothing behind that answer is left holding a pool slot:
 * the pool's wait is bounded by BACKEND_TIMEOUT_MS, and a query still running at the read's
 * deadline has its connection closed (see {@link #get}).
 */
final class Mysql implements Backend {
    static final String SQL = "SELECT id, message FROM greeting WHERE id = ?";

    private final Vertx vertx;
    private final Pool pool;
    private final int size;
    private final long timeoutNanos;

    Mysql(Config config, int eventLoops, int poolSize) {
        this.size = poolSize;
        this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(config.backendTimeoutMs());
        vertx = Vertx.vertx(new VertxOptions()
                .setEventLoopPoolSize(eventLoops)
                .setWorkerPoolSize(1)
                .setInternalBlockingPoolSize(1)
                .setPreferNativeTransport(true));
        MySQLConnectOptions connect = new MySQLConnectOptions()
                .setHost(config.mysqlHost()).setPort(config.mysqlPort())
                .setUser(config.mysqlUser()).setPassword(config.mysqlPassword())
                .setDatabase(config.mysqlDatabase())
                .setCharset("utf8mb4")
                .setCachePreparedStatements(true)
                .setPreparedStatementCacheMaxSize(4);
        PoolOptions options = new PoolOptions()
                .setMaxSize(poolSize)
                .setMaxWaitQueueSize(16_384)
                .setConnectionTimeout(config.backendTimeoutMs())
                .setConnectionTimeoutUnit(TimeUnit.MILLISECONDS);
        // TCP connect bounded like the rest (Vert.x's default is 60 s); the MySQL handshake that
        // follows has no timeout of its own in the client (README, Limits).
        NetClientOptions transport = new NetClientOptions().setConnectTimeout(config.backendTimeoutMs());
        pool = MySQLBuilder.pool().with(options).with(transport).connectingTo(connect).using(vertx).build();
    }

    /**
     * Opens all pool connections at once and runs the query once on each (which prepares it there).
     * A busy box can make one round slower than the pool's 1 s wait, so it is retried for up to 30 s;
     * after that, or at once when MariaDB refuses the connection (it is down), the server starts
     * anyway and the pool connects on demand (and says so).
     */
    void warm() throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            List<Future<SqlConnection>> held = new ArrayList<>();
            for (int i = 0; i < size; i++) held.add(pool.getConnection());
            List<Future<?>> queries = new ArrayList<>();
            for (Future<SqlConnection> f : held) {
                queries.add(f.compose(c -> c.preparedQuery(SQL).execute(Tuple.of(1)).eventually(c::close)));
            }
            try {
                Future.all(queries).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
                return;
            } catch (Exception e) {
                if (refused(e)) { // down, not slow: start without it, the pool connects on demand (503 meanwhile)
                    System.err.println("java-netty: MariaDB not reachable (" + e + "); starting without it,"
                            + " /mysql answers 503 until it is");
                    return;
                }
                if (System.nanoTime() > deadline) {
                    System.err.println("java-netty: MySQL pool not warmed (" + e + "); continuing, it connects on demand");
                    return;
                }
                Thread.sleep(200);
            }
        }
    }

    private static boolean refused(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof java.net.ConnectException) return true;
        }
        return false;
    }

    /**
     * Takes a pooled connection, then runs the query on it, unless the request was answered
     * meanwhile (503 at the deadline while it waited for a connection): under overload the pool's
     * queue holds requests whose clients already have their 503, and running their queries would
     * only push the live ones past the deadline too.
     *
     * <p>A query still unanswered at the read's deadline (the moment the HTTP layer answers 503,
     * or would have, had the client stayed) has its connection closed: the Vert.x MySQL client has
     * no query timeout (eclipse-vertx/vertx-sql-client#668) and MySQL's protocol no way to cancel a
     * statement in flight on its own connection, so otherwise the connection stays busy, out of
     * the pool, until MariaDB replies, which on a frozen server is never. Closing the socket fails
     * the query, the pool drops the connection and opens a new one on demand.
     */
    @Override
    public void get(int id, EventLoop loop, Reply reply) {
        long deadline = System.nanoTime() + timeoutNanos;
        pool.getConnection().onComplete(acquired -> {
            if (acquired.failed()) {
                reply.done(null, acquired.cause());
                return;
            }
            SqlConnection connection = acquired.result();
            long left = deadline - System.nanoTime();
            if (reply.abandoned() || left <= 0) { // answered, or about to be, by the HTTP layer's timer
                connection.close(); // back to the pool, no query sent
                return;
            }
            // Workaround: no query timeout in the Vert.x SQL client; the deadline closes the socket (README, Workarounds)
            AtomicBoolean settled = new AtomicBoolean();
            long timer = vertx.setTimer(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left + 999_999)), t -> {
                if (settled.compareAndSet(false, true)) closeSocket(connection);
            });
            connection.preparedQuery(SQL).execute(Tuple.of(id)).onComplete(ar -> {
                if (settled.compareAndSet(false, true)) {
                    vertx.cancelTimer(timer);
                    connection.close(); // back to the pool
                }
                // else the timer closed its socket: the pool drops the connection when it sees the
                // close. Handing it back as well could give it, closing, to the next waiter.
                if (ar.failed()) {
                    reply.done(null, ar.cause());
                    return;
                }
                RowIterator<Row> rows = ar.result().iterator();
                reply.done(rows.hasNext() ? rows.next().getString(1).getBytes(StandardCharsets.UTF_8) : null, null);
            });
        });
    }

    /**
     * Closes the pooled connection's socket (not the pool's lease: {@code SqlConnection.close()}
     * on a pooled connection only returns it). This reaches through Vert.x's internal interfaces
     * ({@code SqlConnectionInternal.unwrap()}: the pooled connection, then the socket connection),
     * the way Vert.x's own PostgreSQL client reaches its socket to cancel a query. A Vert.x upgrade
     * that changes them makes this cast throw (Vert.x logs it from the timer; the 503 is unaffected)
     * and connections stay busy until MariaDB replies again: NOTES.md has the check by hand.
     */
    private static void closeSocket(SqlConnection connection) {
        Connection pooled = ((SqlConnectionInternal) connection).unwrap();
        ((SocketConnectionBase) pooled.unwrap()).socket().close();
    }

    @Override
    public void close() {
        pool.close();
        vertx.close();
    }
}
