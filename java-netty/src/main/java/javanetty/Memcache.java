package javanetty;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.handler.codec.memcache.binary.BinaryMemcacheClientCodec;
import io.netty.handler.codec.memcache.binary.BinaryMemcacheObjectAggregator;
import io.netty.handler.codec.memcache.binary.BinaryMemcacheOpcodes;
import io.netty.handler.codec.memcache.binary.BinaryMemcacheResponseStatus;
import io.netty.handler.codec.memcache.binary.DefaultFullBinaryMemcacheRequest;
import io.netty.handler.codec.memcache.binary.FullBinaryMemcacheResponse;
import io.netty.util.concurrent.EventExecutor;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * memcached through Netty's own binary memcache codec ({@code netty-codec-memcache}:
 * {@link BinaryMemcacheClientCodec} frames requests and responses, {@link BinaryMemcacheObjectAggregator}
 * joins a response and its value): one pipelined connection per event loop, living on that loop,
 * so a /memcache request never leaves its thread (no locks, no hand-off).
 *
 * <p>What the codec leaves to its user is here: pairing a response with its request (memcached
 * answers in order; each request's {@code opaque} is checked against the response's), and the
 * deadline. A connection whose oldest request is older than BACKEND_TIMEOUT_MS is closed and its
 * pending requests failed, so a late reply can never be paired with a newer request; the next
 * request opens a fresh connection.
 */
final class Memcache implements Backend {
    private static final byte[] KEY_PREFIX = "greeting:".getBytes(StandardCharsets.US_ASCII);
    private static final int SWEEP_MS = 100;
    /** The binary protocol's busy statuses, "Busy" and "Temporary failure" (Netty names neither). */
    // Workaround: the busy statuses by number, as Netty names neither (README, Workarounds)
    private static final short STATUS_BUSY = 0x0085;
    private static final short STATUS_TEMPORARY_FAILURE = 0x0086;
    /** The largest value taken in: memcached's default item size limit (-I, 1 MiB). */
    private static final int MAX_VALUE = 1024 * 1024;

    private final Map<EventExecutor, Conn> conns = new IdentityHashMap<>();

    Memcache(Config config, EventLoopGroup group, Transport transport) {
        InetSocketAddress address = new InetSocketAddress(config.memcacheHost(), config.memcachePort());
        for (EventExecutor e : group) {
            conns.put(e, new Conn((EventLoop) e, address, transport, config.backendTimeoutMs()));
        }
    }

    /** Opens every loop's connection now, so the first requests don't pay for it. */
    void warm() throws Exception {
        for (Conn c : conns.values()) {
            c.loop.submit(c::connect).sync();
        }
    }

    @Override
    public void get(int id, EventLoop loop, Reply reply) {
        conns.get(loop).get(id, reply);
    }

    @Override
    public void close() {
        for (Conn c : conns.values()) {
            c.loop.execute(() -> {
                if (c.channel != null) c.channel.close();
            });
        }
    }

    private record Pending(Reply reply, long sentNanos, int opaque) {
    }

    private static final class Conn {
        final EventLoop loop;
        final InetSocketAddress address;
        final Bootstrap bootstrap;
        final long timeoutNanos;
        final ArrayDeque<Runnable> waitingForConnect = new ArrayDeque<>();
        Channel channel;
        Replies replies;
        boolean connecting;
        int nextOpaque;

        Conn(EventLoop loop, InetSocketAddress address, Transport transport, int timeoutMs) {
            this.loop = loop;
            this.address = address;
            this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            this.bootstrap = new Bootstrap().group(loop).channel(transport.socketChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeoutMs)
                    .handler(new ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new BinaryMemcacheClientCodec(),
                                    new BinaryMemcacheObjectAggregator(MAX_VALUE), new Replies());
                        }
                    });
            loop.scheduleAtFixedRate(this::sweep, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
        }

        void get(int id, Reply reply) {
            long now = System.nanoTime();
            if (channel != null && channel.isActive()) {
                send(id, reply, now);
            } else {
                waitingForConnect.add(() -> send(id, reply, now));
                connect();
            }
        }

        void connect() {
            if (connecting || (channel != null && channel.isActive())) return;
            connecting = true;
            ChannelFuture f = bootstrap.connect(address);
            f.addListener(done -> {
                connecting = false;
                if (done.isSuccess()) {
                    channel = f.channel();
                    replies = channel.pipeline().get(Replies.class);
                }
                // send() fails each waiting request itself when there is still no connection
                for (Runnable r; (r = waitingForConnect.poll()) != null; ) r.run();
            });
        }

        void send(int id, Reply reply, long sentNanos) {
            if (channel == null || !channel.isActive()) {
                reply.done(null, new Failures.Unavailable("memcached: no connection"));
                return;
            }
            ByteBuf key = channel.alloc().buffer(KEY_PREFIX.length + 10);
            key.writeBytes(KEY_PREFIX);
            key.writeCharSequence(Integer.toString(id), StandardCharsets.US_ASCII);
            DefaultFullBinaryMemcacheRequest request = new DefaultFullBinaryMemcacheRequest(key, Unpooled.EMPTY_BUFFER);
            request.setOpcode(BinaryMemcacheOpcodes.GET);
            int opaque = nextOpaque++;
            request.setOpaque(opaque);
            replies.inflight.add(new Pending(reply, sentNanos, opaque));
            channel.writeAndFlush(request, channel.voidPromise());
        }

        /** Every 100 ms: a connection whose oldest request is overdue is frozen or lost; discard it. */
        void sweep() {
            Replies r = replies;
            if (r == null) return;
            Pending oldest = r.inflight.peek();
            if (oldest != null && System.nanoTime() - oldest.sentNanos > timeoutNanos) {
                channel.close(); // Replies.channelInactive fails what was pending on it
                channel = null;
                replies = null;
            }
        }
    }

    /** Pairs each aggregated response with the oldest pending request, which must carry the same opaque. */
    private static final class Replies extends SimpleChannelInboundHandler<FullBinaryMemcacheResponse> {
        final ArrayDeque<Pending> inflight = new ArrayDeque<>();

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullBinaryMemcacheResponse response) {
            Pending p = inflight.poll();
            if (p == null || p.opaque != response.opaque()) {
                if (p != null) p.reply.done(null, new IllegalStateException("memcached: a response out of order"));
                ctx.close();
                return;
            }
            short status = response.status();
            if (status == BinaryMemcacheResponseStatus.SUCCESS) {
                p.reply.done(ByteBufUtil.getBytes(response.content()), null);
            } else if (status == BinaryMemcacheResponseStatus.KEY_ENOENT) {
                p.reply.done(null, null);
            } else if (status == STATUS_BUSY || status == STATUS_TEMPORARY_FAILURE) {
                // up, but cannot serve now (CONTRACT.md, "Unavailable, busy, or an error"): 503
                p.reply.done(null, new Failures.Unavailable("memcached answered status 0x" + Integer.toHexString(status & 0xffff)));
            } else { // memcached answered, with an error: not an outage
                p.reply.done(null, new IllegalStateException("memcached answered status 0x"
                        + Integer.toHexString(status & 0xffff) + ": " + response.content().toString(StandardCharsets.US_ASCII)));
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            for (Pending p; (p = inflight.poll()) != null; ) {
                p.reply.done(null, new Failures.Unavailable("memcached connection closed"));
            }
            super.channelInactive(ctx);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
