package javatio;

import java.nio.ByteBuffer;
import java.util.concurrent.Executor;

import com.litongjava.aio.Packet;
import com.litongjava.tio.core.ChannelContext;
import com.litongjava.tio.core.Tio;
import com.litongjava.tio.core.TioConfig;
import com.litongjava.tio.core.pool.BufferPoolUtils;
import com.litongjava.tio.core.task.HandlePacketTask;

/**
 * Every place where the stack reaches into t-io's internals (public fields and task classes of
 * com.litongjava tio-core 2.0.8, not an API it documents). Each has its row in README, Workarounds.
 */
final class TioInternals {
    private TioInternals() {}

    static Gate installGate(ChannelContext ctx, Executor readExecutor) {
        Gate gate = new Gate(ctx.asynchronousSocketChannel, readExecutor);
        // Workaround: t-io re-reads at once, with no backpressure; its socket field is wrapped (README, Workarounds)
        ctx.asynchronousSocketChannel = gate;
        return gate;
    }

    static ByteBuffer writeBuffer(int size) {
        // Workaround: t-io keeps every written buffer for reuse by its own pool; one from elsewhere is never freed (README, Workarounds)
        return BufferPoolUtils.allocate(TioConfig.WRITE_CHUNK_SIZE, size);
    }

    static void handle(ChannelContext ctx, Packet packet) {
        // Workaround: t-io offers no public way to hand a packet to the handler (README, Workarounds)
        try {
            new HandlePacketTask().handle(ctx, packet);
        } catch (Throwable e) {
            Tio.close(ctx, "handler failed");
        }
    }
}
