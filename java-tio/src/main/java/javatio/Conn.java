package javatio;

import java.util.ArrayDeque;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;

import com.litongjava.tio.core.ChannelContext;
import com.litongjava.tio.core.Tio;

/**
 * Per-connection state t-io does not keep: the order of replies, how many are owed, whether more
 * requests are read, and the head timer (HEAD_TIMEOUT_MS from the first byte of an incomplete request).
 *
 * <p>Order: handlers of one connection run one after another, but an asynchronous reply (/sleep, a
 * backend call) completes later on another thread; replies ready behind it wait here so that pipelined
 * requests are answered in order. Tio.send only queues the packet, so calling it under the monitor is cheap.
 *
 * <p>Backpressure: a reply is owed from the moment its request is decoded until t-io has written it
 * (Listener.onAfterSent). At {@link #PAUSE_AT} owed the connection's next read is held back (Gate); it is
 * issued again once no more than {@link #RESUME_AT} are owed. So a client that pipelines without reading
 * is stopped by TCP flow control instead of filling the heap. (t-io's sends hold no thread: a write stuck
 * on such a client costs its buffers only.)
 */
final class Conn {
    static final int PAUSE_AT = 256, RESUME_AT = 64;

    private static final class Slot {
        Reply reply;
    }

    private final ChannelContext ctx;
    private final Gate gate;
    private final ScheduledExecutorService timer;
    private final long headTimeoutMs;
    private final ArrayDeque<Slot> waiting = new ArrayDeque<>();
    /** Where the parser says how long a request with an incomplete body is (t-io then waits for it all). */
    final IntConsumer need;
    /** No more requests are decoded: a request asked to close, was refused, or has a body left unread. */
    volatile boolean done;
    /** A reply saying "Connection: close" was issued: later requests are not answered. */
    volatile boolean closing;
    private int owed;
    private boolean paused;
    /** Bytes of an incomplete request are buffered. */
    private boolean partial;
    private ScheduledFuture<?> headTimer;
    private long headSeq;

    Conn(ChannelContext ctx, Gate gate, ScheduledExecutorService timer, long headTimeoutMs) {
        this.ctx = ctx;
        this.gate = gate;
        this.timer = timer;
        this.headTimeoutMs = headTimeoutMs;
        this.need = ctx::setPacketNeededLength;
    }

    static Conn of(ChannelContext ctx) {
        return (Conn) ctx.getAttribute();
    }

    // ---------------------------------------------------------------- reading

    /** decode produced a request (which ends its head timer); last = nothing after it is read. */
    synchronized void decoded(boolean last) {
        partial = false;
        stopHeadTimer();
        owed++;
        if (last) {
            done = true;
            gate.stop();
        } else if (owed >= PAUSE_AT && !paused) {
            paused = true;
            gate.pause(); // (no head timer while paused: not the client's fault, we stopped reading)
        }
    }

    /** t-io wrote one reply (or dropped it with the connection), or a request is dropped unanswered. */
    synchronized void sent() {
        owed--;
        if (paused && owed <= RESUME_AT) {
            paused = false;
            gate.resume();
            if (partial) {
                startHeadTimer();
            }
        }
    }

    // ---------------------------------------------------------------- head timer

    /** Bytes of a request are buffered but it is not complete: the head timer runs (unless reading is held). */
    synchronized void incomplete() {
        partial = true;
        if (headTimer == null && !done && !paused) {
            startHeadTimer();
        }
    }

    /** The connection closes: stop the head timer. */
    synchronized void closed() {
        partial = false;
        stopHeadTimer();
    }

    // Workaround: t-io has no head timeout, its heartbeat counts from the last byte (README, Workarounds)
    private void startHeadTimer() {
        long seq = ++headSeq;
        headTimer = timer.schedule(() -> expire(seq), headTimeoutMs, TimeUnit.MILLISECONDS);
    }

    private void stopHeadTimer() {
        if (headTimer != null) {
            headTimer.cancel(false);
            headTimer = null;
            headSeq++;
        }
    }

    /**
     * HEAD_TIMEOUT_MS after the first byte of a request that is still incomplete: a 408 through t-io's
     * handler queue (behind the requests already decoded, as if decoded now), then the close.
     */
    private void expire(long seq) {
        synchronized (this) {
            if (seq != headSeq || headTimer == null || done) {
                return;
            }
            headTimer = null;
            decoded(true);
        }
        TioInternals.handle(ctx, Request.refusal(408));
    }

    // ---------------------------------------------------------------- replies

    /** A reply that is ready now. */
    synchronized void reply(Reply r) {
        if (r.closeAfter()) {
            closing = true;
        }
        if (waiting.isEmpty()) {
            Tio.send(ctx, r);
        } else {
            Slot s = new Slot();
            s.reply = r;
            waiting.add(s);
        }
    }

    /** Reserve the place of a reply that will be ready later; pass the result to complete(). */
    synchronized Object reserve(boolean closeAfter) {
        if (closeAfter) {
            closing = true;
        }
        Slot s = new Slot();
        waiting.add(s);
        return s;
    }

    // Workaround: Tio.send sends in call order, not request order (README, Workarounds)
    synchronized void complete(Object slot, Reply r) {
        ((Slot) slot).reply = r;
        Slot head;
        while ((head = waiting.peek()) != null && head.reply != null) {
            waiting.poll();
            Tio.send(ctx, head.reply);
        }
    }
}
