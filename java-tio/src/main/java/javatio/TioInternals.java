package javatio;

import java.util.concurrent.Executor;

import com.litongjava.aio.Packet;
import com.litongjava.tio.core.ChannelContext;
import com.litongjava.tio.core.Tio;
import com.litongjava.tio.core.task.HandlePacketTask;

/** Every place where the stack reaches into t-io's internals (the com.litongjava fork's 2.0.8). */
final class TioInternals {
    private TioInternals() {}

    static Gate installGate(ChannelContext ctx, Executor readExecutor) {
        Gate gate = new Gate(ctx.asynchronousSocketChannel, readExecutor);
        // Workaround: the fork re-reads at once (ReadCompletionHandler L112), with no backpressure
        ctx.asynchronousSocketChannel = gate;
        return gate;
    }

    static void moveSends(ChannelContext ctx, Executor executor) {
        // the fork's sends hold no thread (SendPacketTask writes asynchronously): nothing to move
    }

    static void handle(ChannelContext ctx, Packet packet) {
        try {
            new HandlePacketTask().handle(ctx, packet);
        } catch (Throwable e) {
            Tio.close(ctx, "handler failed");
        }
    }
}
