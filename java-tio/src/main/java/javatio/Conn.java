package javatio;

import java.util.ArrayDeque;

import org.tio.core.ChannelContext;
import org.tio.core.Tio;

/**
 * Per-connection response order. Handlers for one connection run one after another, but an
 * asynchronous reply (/sleep) completes later on another thread; replies that are ready behind it
 * wait here so that pipelined requests are answered in order. Tio.send only queues the packet
 * (t-io's SendRunnable writes it), so holding the monitor while calling it is cheap.
 *
 * <p>It also counts the replies not yet written. t-io keeps reading and queues every response
 * without bound, and its SendRunnable parks a tio-worker until a write completes: 70 clients that
 * pipelined requests and never read filled the 512 MB heap and stopped the server for everyone
 * (README, "A client that does not read"). A connection with more than {@link #MAX_UNSENT}
 * replies owed is closed instead.
 */
final class Conn {
    static final String KEY = "javatio.conn";
    /**
     * Replies owed (each a few hundred bytes) before the connection is closed. /sleep counts from
     * the request, so a client pipelining 600 requests, half of them /sleep, was cut off at 256;
     * 1024 bounds 70 non-reading clients to about 15 MB and lets that one through.
     */
    static final int MAX_UNSENT = 1024;

    private static final class Slot {
        Reply reply;
    }

    private final ChannelContext ctx;
    private final ArrayDeque<Slot> waiting = new ArrayDeque<>();
    /** Set once a request asked to close: later pipelined requests are not answered. */
    boolean closing;
    /** Replies owed: reserved or queued for t-io, and not yet written. */
    private int unsent;

    Conn(ChannelContext ctx) {
        this.ctx = ctx;
    }

    /** Whether the client stopped reading its answers: more than MAX_UNSENT owed. */
    synchronized boolean overdue() {
        return unsent > MAX_UNSENT;
    }

    /** t-io wrote one reply (or gave up on it with the connection). */
    synchronized void sent() {
        unsent--;
    }

    /** A reply that is ready now. */
    synchronized void reply(Reply r) {
        unsent++;
        if (waiting.isEmpty()) {
            Tio.send(ctx, r);
        } else {
            Slot s = new Slot();
            s.reply = r;
            waiting.add(s);
        }
    }

    /** Reserve the place of a reply that will be ready later; pass the result to complete(). */
    synchronized Object reserve() {
        unsent++;
        Slot s = new Slot();
        waiting.add(s);
        return s;
    }

    synchronized void complete(Object slot, Reply r) {
        ((Slot) slot).reply = r;
        Slot head;
        while ((head = waiting.peek()) != null && head.reply != null) {
            waiting.poll();
            Tio.send(ctx, head.reply);
        }
    }
}
