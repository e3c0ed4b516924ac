package javanetty;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.vertx.core.VertxException;
import io.vertx.sqlclient.DatabaseException;

import java.io.IOException;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * 503 (the backend is down, refusing, frozen, its pool is exhausted, or it gave a busy reply) versus
 * 500 (anything else: an error reply from a backend that is up among them).
 */
final class Failures {
    private Failures() {
    }

    static boolean unavailable(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException) return redisBusy(t.getMessage()); // an error reply
            // Workaround: DatabaseException is a VertxException too, so it is tested first (README, Workarounds)
            if (t instanceof DatabaseException) return false; // MariaDB answered with an error (a VertxException too)
            if (t instanceof IOException || t instanceof TimeoutException) return true; // refused, reset, closed
            if (t instanceof RedisException) return true; // not connected, queue full, command timeout
            if (t instanceof VertxException) return true; // closed connection, pool wait timeout
            if (t instanceof Unavailable) return true;
            if (t.getCause() == t) break;
        }
        return false;
    }

    private static final Set<String> REDIS_BUSY = Set.of("LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN");

    /**
     * Redis's busy replies (CONTRACT.md, "Unavailable, busy, or an error"): the server is up but says it
     * cannot serve now (loading its dataset, running a script, its primary or cluster down). Unavailability:
     * 503. Lettuce turns every error reply, these included, into a RedisCommandExecutionException
     * (LOADING and BUSY into its subclasses), whose message is the reply's text.
     */
    static boolean redisBusy(String reply) {
        if (reply == null) return false;
        int space = reply.indexOf(' ');
        return REDIS_BUSY.contains(space < 0 ? reply : reply.substring(0, space));
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
