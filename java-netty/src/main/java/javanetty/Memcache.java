package javanetty;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.EventExecutor;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * memcached over its text protocol, on Netty itself: one pipelined connection per event loop,
 * living on that loop, so a /memcache request never leaves its thread (no locks, no hand-off).
 * Replies come back in request order, so a FIFO pairs them. A connection whose oldest request
 * is older than BACKEND_TIMEOUT_MS is closed and its pending requests failed: a late reply can
 * never be paired with a newer request. The next request opens a fresh connection.
 */
final class Memcache implements Backend {
    private static final byte[] GET = "get greeting:".getBytes(StandardCharsets.US_ASCII);
    private static final int SWEEP_MS = 100;

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

    private record Pending(Reply reply, long sentNanos) {
    }

    private static final class Conn {
        final EventLoop loop;
        final InetSocketAddress address;
        final Bootstrap bootstrap;
        final long timeoutNanos;
        final ArrayDeque<Pending> waitingForConnect = new ArrayDeque<>();
        Channel channel;
        Decoder decoder;
        boolean connecting;

        Conn(EventLoop loop, InetSocketAddress address, Transport transport, int timeoutMs) {
            this.loop = loop;
            this.address = address;
            this.timeoutNanos = TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            this.bootstrap = new Bootstrap().group(loop).channel(transport.socketChannel())
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, timeoutMs)
                    .handler(new io.netty.channel.ChannelInitializer<>() {
                        @Override
                        protected void initChannel(Channel ch) {
                            ch.pipeline().addLast(new Decoder());
                        }
                    });
            loop.scheduleAtFixedRate(this::sweep, SWEEP_MS, SWEEP_MS, TimeUnit.MILLISECONDS);
        }

        void get(int id, Reply reply) {
            Pending p = new Pending(reply, System.nanoTime());
            if (channel != null && channel.isActive()) {
                send(p, id);
            } else {
                waitingForConnect.add(new Pending((m, e) -> {
                    if (e != null) reply.done(null, e); else send(new Pending(reply, p.sentNanos), id);
                }, p.sentNanos));
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
                    decoder = channel.pipeline().get(Decoder.class);
                }
                for (Pending p; (p = waitingForConnect.poll()) != null; ) {
                    p.reply.done(null, done.isSuccess() ? null : new Failures.Unavailable("memcached: " + done.cause()));
                }
            });
        }

        void send(Pending p, int id) {
            if (channel == null || !channel.isActive()) {
                p.reply.done(null, new Failures.Unavailable("memcached connection lost"));
                return;
            }
            decoder.inflight.add(p);
            ByteBuf b = channel.alloc().directBuffer(GET.length + 12);
            b.writeBytes(GET);
            b.writeCharSequence(Integer.toString(id), StandardCharsets.US_ASCII);
            b.writeByte('\r').writeByte('\n');
            channel.writeAndFlush(b, channel.voidPromise());
        }

        /** Every 100 ms: a connection whose oldest request is overdue is frozen or lost; discard it. */
        void sweep() {
            Decoder d = decoder;
            if (d == null) return;
            Pending oldest = d.inflight.peek();
            if (oldest != null && System.nanoTime() - oldest.sentNanos > timeoutNanos) {
                channel.close(); // Decoder.channelInactive fails what was pending on it
                channel = null;
                decoder = null;
            }
        }
    }

    /** Parses "VALUE <key> <flags> <bytes>\r\n<data>\r\nEND\r\n" or "END\r\n"; one reply per pending get. */
    private static final class Decoder extends ByteToMessageDecoder {
        final ArrayDeque<Pending> inflight = new ArrayDeque<>();

        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            while (in.isReadable()) {
                int start = in.readerIndex();
                int eol = in.indexOf(start, in.writerIndex(), (byte) '\n');
                if (eol < 0) return;
                int lineLength = eol - start + 1;
                Pending p = inflight.peek();
                if (startsWith(in, start, "END\r\n") && lineLength == 5) {
                    in.skipBytes(5);
                    complete(p, null, null);
                } else if (startsWith(in, start, "VALUE ")) {
                    int bytes = lastNumber(in, start, eol - 1);
                    if (bytes < 0) {
                        protocolError(ctx, "bad VALUE line");
                        return;
                    }
                    int need = lineLength + bytes + 2 + 5;
                    if (in.readableBytes() < need) return; // wait for the rest
                    byte[] value = new byte[bytes];
                    in.getBytes(eol + 1, value);
                    if (!startsWith(in, eol + 1 + bytes, "\r\nEND\r\n")) {
                        protocolError(ctx, "a VALUE not followed by END");
                        return;
                    }
                    in.skipBytes(need);
                    complete(p, value, null);
                } else {
                    String line = in.toString(start, lineLength, StandardCharsets.US_ASCII).trim();
                    in.skipBytes(lineLength);
                    complete(p, null, new IllegalStateException("memcached answered: " + line));
                }
            }
        }

        private void complete(Pending p, byte[] value, Throwable error) {
            if (p == null) return; // a reply nobody asked for: cannot happen on a FIFO connection
            inflight.poll();
            p.reply.done(value, error);
        }

        private void protocolError(ChannelHandlerContext ctx, String what) {
            Pending p = inflight.poll();
            if (p != null) p.reply.done(null, new IllegalStateException("memcached protocol: " + what));
            ctx.close();
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

        private static boolean startsWith(ByteBuf in, int at, String s) {
            if (in.writerIndex() - at < s.length()) return false;
            for (int i = 0; i < s.length(); i++) {
                if (in.getByte(at + i) != s.charAt(i)) return false;
            }
            return true;
        }

        /** The number that ends the line [start, crIndex) ("... <bytes>"), or -1. */
        private static int lastNumber(ByteBuf in, int start, int cr) {
            if (in.getByte(cr) != '\r') return -1;
            int i = cr - 1;
            int value = 0, scale = 1;
            while (i > start && Character.isDigit(in.getByte(i))) {
                value += (in.getByte(i) - '0') * scale;
                scale *= 10;
                i--;
            }
            return scale == 1 ? -1 : value;
        }
    }
}
