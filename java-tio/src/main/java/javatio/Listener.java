package javatio;

import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;

import com.litongjava.tio.core.ChannelContext;
import com.litongjava.tio.core.Tio;
import com.litongjava.aio.Packet;
import com.litongjava.tio.server.intf.ServerAioListener;

/** Connection life cycle: per-connection state, replies owed, closing after a "close" reply, idle timeout. */
final class Listener implements ServerAioListener {
    private final long headTimeoutMs, idleTimeoutMs;
    private final ScheduledExecutorService timer;
    private final Executor readExecutor;

    /**
     * @param headTimeoutMs HEAD_TIMEOUT_MS (Conn's head timer, on {@code timer})
     * @param idleTimeoutMs IDLE_TIMEOUT_MS, each connection's heartbeat timeout (ChannelContext.heartbeatTimeout)
     * @param readExecutor  where a read held back by backpressure is issued again
     */
    Listener(long headTimeoutMs, long idleTimeoutMs, ScheduledExecutorService timer, Executor readExecutor) {
        this.headTimeoutMs = headTimeoutMs;
        this.idleTimeoutMs = idleTimeoutMs;
        this.timer = timer;
        this.readExecutor = readExecutor;
    }

    /** Runs before t-io issues the connection's first read (AcceptCompletionHandler). */
    @Override
    public void onAfterConnected(ChannelContext ctx, boolean isConnected, boolean isReconnect) {
        Gate gate = TioInternals.installGate(ctx, readExecutor);
        ctx.setAttribute(new Conn(ctx, gate, timer, headTimeoutMs));
        ctx.heartbeatTimeout = idleTimeoutMs;
    }

    @Override
    public void onAfterSent(ChannelContext ctx, Packet packet, boolean isSentSuccess) {
        if (!(packet instanceof Reply r)) {
            return;
        }
        Conn c = Conn.of(ctx);
        if (c != null) {
            c.sent();
        }
        if (r.closeAfter()) {
            Tio.remove(ctx, "Connection: close");
        }
    }

    /**
     * No byte received and no reply written for this connection's heartbeat timeout (IDLE_TIMEOUT_MS):
     * false lets t-io close it.
     */
    @Override
    public boolean onHeartbeatTimeout(ChannelContext ctx, Long interval, int heartbeatTimeoutCount) {
        return false;
    }

    @Override
    public void onBeforeClose(ChannelContext ctx, Throwable throwable, String remark, boolean isRemove) {
        Conn c = Conn.of(ctx);
        if (c != null) {
            c.closed(); // the head timer, if one runs
        }
    }

    @Override public void onAfterDecoded(ChannelContext ctx, Packet packet, int packetSize) {}
    @Override public void onAfterReceivedBytes(ChannelContext ctx, int receivedBytes) {}
    @Override public void onAfterHandled(ChannelContext ctx, Packet packet, long cost) {}
}
