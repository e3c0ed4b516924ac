package javanetty;

import io.netty.channel.EventLoop;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
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

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * MariaDB through the Vert.x reactive MySQL client (Netty-based, binary protocol): a fixed pool
 * whose connections are all opened and given the prepared statement at start, so no request pays
 * for a connect or a COM_STMT_PREPARE and no validation query ever runs. The pool's wait is
 * bounded by BACKEND_TIMEOUT_MS; the HTTP layer's timer bounds the whole read.
 */
final class Mysql implements Backend {
    static final String SQL = "SELECT id, message FROM greeting WHERE id = ?";

    private final Vertx vertx;
    private final Pool pool;
    private final int size;

    Mysql(Config config, int eventLoops, int poolSize) {
        this.size = poolSize;
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
        pool = MySQLBuilder.pool().with(options).connectingTo(connect).using(vertx).build();
    }

    /**
     * Opens all pool connections at once and runs the query once on each (which prepares it there).
     * A busy box can make one round slower than the pool's 1 s wait, so it is retried for up to 30 s;
     * after that the server starts anyway and the pool connects lazily (and says so).
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
                if (System.nanoTime() > deadline) {
                    System.err.println("java-netty: MySQL pool not warmed (" + e + "); continuing, it connects on demand");
                    return;
                }
                Thread.sleep(200);
            }
        }
    }

    /**
     * Takes a pooled connection, then runs the query on it, unless the request was answered
     * meanwhile (503 at the deadline while it waited for a connection): under overload the pool's
     * queue holds requests whose clients already have their 503, and running their queries would
     * only push the live ones past the deadline too.
     */
    @Override
    public void get(int id, EventLoop loop, Reply reply) {
        pool.getConnection().onComplete(acquired -> {
            if (acquired.failed()) {
                reply.done(null, acquired.cause());
                return;
            }
            SqlConnection connection = acquired.result();
            if (reply.abandoned()) {
                connection.close(); // back to the pool, no query sent
                return;
            }
            connection.preparedQuery(SQL).execute(Tuple.of(id)).onComplete(ar -> {
                connection.close();
                if (ar.failed()) {
                    reply.done(null, ar.cause());
                    return;
                }
                RowIterator<Row> rows = ar.result().iterator();
                reply.done(rows.hasNext() ? rows.next().getString(1).getBytes(StandardCharsets.UTF_8) : null, null);
            });
        });
    }

    @Override
    public void close() {
        pool.close();
        vertx.close();
    }
}
