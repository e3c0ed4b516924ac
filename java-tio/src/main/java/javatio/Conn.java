package javatio;

import java.util.ArrayDeque;

import org.tio.core.ChannelContext;
import org.tio.core.Tio;

/**
 * Per-connection response order. Handlers for one connection run one after another, but an
 * asynchronous reply (/sleep) completes later on another thread; replies that are ready behind it
 * wait here so that pipelined requests are answered in order. Tio.send only queues the packet
 * (t-io's SendRunnable writes it), so holding the monitor while calling it is cheap.
 */
final class Conn {
    static final String KEY = "javatio.conn";

    private static final class Slot {
        Reply reply;
    }

    private final ChannelContext ctx;
    private final ArrayDeque<Slot> waiting = new ArrayDeque<>();
    /** Set once a request asked to close: later pipelined requests are not answered. */
    boolean closing;

    Conn(ChannelContext ctx) {
        this.ctx = ctx;
    }

    /** A reply that is ready now. */
    synchronized void reply(Reply r) {
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
