package javatio;

import java.util.concurrent.Executor;

import org.tio.core.ChannelContext;
import org.tio.core.intf.Packet;

/**
 * Every place where the stack reaches into t-io 3.8.6's internals (public fields of its connection and
 * task objects, not an API t-io documents). Each has its row in README, Workarounds; nothing else in
 * the stack touches these fields.
 */
final class TioInternals {
    private TioInternals() {}

    /**
     * Puts a {@link Gate} in place of the connection's socket, so that a read can be held back. Called in
     * TioServerListener.onAfterConnected, before t-io issues the first read; every later read
     * (ReadCompletionHandler) goes through the field replaced here.
     */
    static Gate installGate(ChannelContext ctx, Executor readExecutor) {
        Gate gate = new Gate(ctx.asynchronousSocketChannel, readExecutor);
        // Workaround: t-io re-reads at once, with no backpressure; its socket field is wrapped (README, Workarounds)
        ctx.asynchronousSocketChannel = gate;
        return gate;
    }

    /**
     * Moves the connection's later sends to {@code executor}: t-io's SendRunnable waits on its thread until
     * each write completes, and one to a client that does not read never does.
     */
    static void moveSends(ChannelContext ctx, Executor executor) {
        if (ctx.sendRunnable.executor != executor) {
            // Workaround: t-io's SendRunnable holds its thread until a write completes (README, Workarounds)
            ctx.sendRunnable.executor = executor;
        }
    }

    /**
     * Hands a packet decoded outside t-io's decode (the head timer's 408) to the connection's handler
     * queue, behind the requests already decoded, as t-io's DecodeRunnable does with what it decodes.
     */
    static void handle(ChannelContext ctx, Packet packet) {
        // Workaround: t-io offers no public way to queue a packet for the handler (README, Workarounds)
        ctx.decodeRunnable.handler(packet, 0);
    }
}
