package javatio;

import org.tio.core.ChannelContext;
import org.tio.core.Tio;
import org.tio.core.intf.Packet;
import org.tio.server.intf.TioServerListener;

/** Connection life cycle: per-connection reply order and count, and closing after a "close" response is written. */
final class Listener implements TioServerListener {
    @Override
    public void onAfterConnected(ChannelContext ctx, boolean isConnected, boolean isReconnect) {
        ctx.setAttribute(Conn.KEY, new Conn(ctx));
    }

    @Override
    public void onAfterSent(ChannelContext ctx, Packet packet, boolean isSentSuccess) {
        if (!(packet instanceof Reply r)) {
            return;
        }
        if (ctx.getAttribute(Conn.KEY) instanceof Conn c) {
            c.sent();
        }
        if (r.closeAfter()) {
            Tio.remove(ctx, "Connection: close / HTTP/1.0");
        }
    }

    /** No bytes for heartbeatTimeout ms: false lets t-io close the idle keep-alive connection. */
    @Override
    public boolean onHeartbeatTimeout(ChannelContext ctx, Long interval, int heartbeatTimeoutCount) {
        return false;
    }

    @Override public void onAfterDecoded(ChannelContext ctx, Packet packet, int packetSize) {}
    @Override public void onAfterReceivedBytes(ChannelContext ctx, int receivedBytes) {}
    @Override public void onAfterHandled(ChannelContext ctx, Packet packet, long cost) {}
    @Override public void onBeforeClose(ChannelContext ctx, Throwable throwable, String remark, boolean isRemove) {}
}
