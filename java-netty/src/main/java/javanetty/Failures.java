package javanetty;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.vertx.core.VertxException;
import io.vertx.sqlclient.DatabaseException;

import java.io.IOException;
import java.util.concurrent.TimeoutException;

/** 503 (the backend is down, refusing, frozen, or its pool is exhausted) versus 500 (anything else). */
final class Failures {
    private Failures() {
    }

    static boolean unavailable(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException) return false; // Redis answered with an error
            if (t instanceof DatabaseException) return false; // MariaDB answered with an error (a VertxException too)
            if (t instanceof IOException || t instanceof TimeoutException) return true; // refused, reset, closed
            if (t instanceof RedisException) return true; // not connected, queue full, command timeout
            if (t instanceof VertxException) return true; // closed connection, pool wait timeout
            if (t instanceof Unavailable) return true;
            if (t.getCause() == t) break;
        }
        return false;
    }

    /** The memcached client's own "not answering" failure. */
    static final class Unavailable extends IOException {
        Unavailable(String message) {
            super(message);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this; // a control-flow signal: no stack trace to pay for
        }
    }
}
