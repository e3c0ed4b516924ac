import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

import org.tio.core.ChannelContext;
import org.tio.core.Node;
import org.tio.core.PacketHandlerMode;
import org.tio.core.Tio;
import org.tio.core.TioConfig;
import org.tio.core.intf.Packet;
import org.tio.server.TioServer;
import org.tio.server.TioServerConfig;
import org.tio.server.intf.TioServerHandler;
import org.tio.utils.Threads;

/**
 * The least a server on t-io 3.8.6 (tio-core) can do per GET /hello: what no HTTP server on this t-io,
 * configured like the stack, can do better (NOTES.md, "2026-11-26: t-io 3.8.6 itself is the /hello
 * limit"). It is the stack's Main without the stack: the same TioServerConfig (t-io's own
 * group and worker pools, sized by the TIO_MAX_POOL_SIZE_FOR_GROUP / TIO_MAX_POOL_SIZE_FOR_TIO system
 * properties as run.sh passes them; TIO_PACKET_HANDLER_MODE, QUEUE by default as in run.sh), the same
 * bind (backlog 4096), and a handler that does nothing but:
 *
 * <ul>
 *   <li>decode: finds the end of the head (CRLF CRLF) and returns an empty Packet; nothing is parsed
 *       or checked (no method, path, limits, framing, Connection header; a body is not read);
 *   <li>handler: Tio.send of one reply packet;
 *   <li>encode: the contract's /hello bytes with the stack's headers in the stack's order (Server,
 *       Content-Type, Content-Length, Date), the whole response prebuilt once per second.
 * </ul>
 *
 * No listener, no per-connection state, no backpressure, no idle timeout (t-io's heartbeat is off).
 * Not a server to deploy: it answers every request with Hello, World! and never closes a connection.
 *
 * <p>Run (JDK 25 as the harness, pinned like the benchmark, the stack's JVM flags):
 * <pre>
 * cd java-tio &amp;&amp; mvn -B -q -ntp package -DskipTests
 * PORT=18094 taskset -c 0 chrt --batch 0 java -Xms512m -Xmx512m -XX:+AlwaysPreTouch -XX:+UseParallelGC \
 *   -DTIO_MAX_POOL_SIZE_FOR_GROUP=4 -DTIO_MAX_POOL_SIZE_FOR_TIO=64 -Dtio.default.read.buffer.size=20480 \
 *   -cp 'target/lib/*' limits/TioHelloAlone.java
 * </pre>
 * Environment: PORT (required), STACK_NAME (the Server header, default java-tio), TIO_PACKET_HANDLER_MODE
 * (QUEUE or SINGLE_THREAD, default QUEUE), TIO_STAT_ON (t-io's TioConfig.statOn, default true as t-io's),
 * TIO_AIO_GROUP (POOL or FIXED, default POOL as t-io and run.sh: see Backlog).
 */
public class TioHelloAlone {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(env("PORT", null));
        Hello hello = new Hello(env("STACK_NAME", "java-tio"));
        TioServerConfig config = new TioServerConfig("hello-alone", hello, null, Threads.getTioExecutor(),
                Threads.getGroupExecutor());
        config.packetHandlerMode = PacketHandlerMode.valueOf(env("TIO_PACKET_HANDLER_MODE", "QUEUE"));
        config.statOn = Boolean.parseBoolean(env("TIO_STAT_ON", "true"));
        config.setHeartbeatTimeout(0);
        boolean fixed = switch (env("TIO_AIO_GROUP", "POOL")) {
            case "POOL" -> false;
            case "FIXED" -> true;
            default -> throw new IllegalStateException("TIO_AIO_GROUP: POOL or FIXED");
        };
        new Backlog(config, fixed).start("127.0.0.1", port);
        System.out.printf("TioHelloAlone on 127.0.0.1:%d (group threads %d, tio threads %d, mode %s, statOn %s,"
                        + " read buffer %d, AIO group %s)%n", port, Threads.MAX_POOL_SIZE_FOR_GROUP,
                Threads.MAX_POOL_SIZE_FOR_TIO, config.packetHandlerMode, config.statOn, config.getReadBufferSize(),
                fixed ? "fixed" : "pool");
    }

    static String env(String name, String dflt) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            if (dflt == null) {
                throw new IllegalStateException("missing environment variable " + name);
            }
            return dflt;
        }
        return v;
    }

    /** t-io's callbacks: the end of the head, one reply, the prebuilt bytes. */
    static final class Hello implements TioServerHandler {
        private static final DateTimeFormatter IMF = DateTimeFormatter
                .ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);
        private static final byte[] BODY = "Hello, World!".getBytes(StandardCharsets.US_ASCII);

        private record Response(long second, byte[] bytes) {}

        private final String server;
        private volatile Response current = new Response(-1, null);

        Hello(String server) {
            this.server = server;
        }

        private byte[] response() {
            long second = System.currentTimeMillis() / 1000;
            Response r = current;
            if (r.second != second) {
                String head = "HTTP/1.1 200 OK\r\nServer: " + server + "\r\nContent-Type: text/plain; charset=utf-8\r\n"
                        + "Content-Length: " + BODY.length + "\r\nDate: " + IMF.format(Instant.ofEpochSecond(second))
                        + "\r\n\r\n";
                byte[] h = head.getBytes(StandardCharsets.US_ASCII);
                byte[] all = new byte[h.length + BODY.length];
                System.arraycopy(h, 0, all, 0, h.length);
                System.arraycopy(BODY, 0, all, h.length, BODY.length);
                r = new Response(second, all);
                current = r;
            }
            return r.bytes;
        }

        @Override
        public Packet decode(ByteBuffer buffer, int limit, int position, int readableLength, ChannelContext ctx) {
            for (int i = position + 3; i < limit; i++) {
                if (buffer.get(i) == '\n' && buffer.get(i - 1) == '\r' && buffer.get(i - 2) == '\n'
                        && buffer.get(i - 3) == '\r') {
                    buffer.position(i + 1);
                    return new Packet();
                }
            }
            return null; // t-io keeps the bytes and calls again when more arrive
        }

        @Override
        public void handler(Packet packet, ChannelContext ctx) {
            Tio.send(ctx, new Packet());
        }

        @Override
        public ByteBuffer encode(Packet packet, TioConfig tioConfig, ChannelContext ctx) {
            return ByteBuffer.wrap(response());
        }
    }

    /**
     * TioServer.start binds with backlog 0 (the JDK's 50); the stack binds with 4096 (BacklogTioServer).
     * TIO_AIO_GROUP=POOL is t-io's channel group (AsynchronousChannelGroup.withThreadPool(groupExecutor): the
     * JDK polls on its own internal thread and hands each completion to t-io's group pool); FIXED is the
     * JDK's other kind, withFixedThreadPool(TIO_MAX_POOL_SIZE_FOR_GROUP), whose threads poll themselves
     * and run a read's completion on the thread that polled it.
     */
    static final class Backlog extends TioServer {
        private final boolean fixed;
        private AsynchronousServerSocketChannel channel;
        private Node node;

        Backlog(TioServerConfig config, boolean fixed) {
            super(config);
            this.fixed = fixed;
        }

        @Override
        public void start(String ip, int port) throws IOException {
            TioServerConfig config = getTioServerConfig();
            node = new Node(ip, port);
            AsynchronousChannelGroup group = fixed
                    ? AsynchronousChannelGroup.withFixedThreadPool(Threads.MAX_POOL_SIZE_FOR_GROUP,
                            Thread.ofPlatform().name("aio-fixed-", 0).daemon(false).factory())
                    : AsynchronousChannelGroup.withThreadPool(config.groupExecutor);
            channel = AsynchronousServerSocketChannel.open(group);
            channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            channel.setOption(StandardSocketOptions.SO_RCVBUF, 64 * 1024);
            channel.bind(new InetSocketAddress(ip, port), 4096);
            config.startTime = System.currentTimeMillis();
            channel.accept(this, config.getAcceptCompletionHandler());
        }

        @Override
        public AsynchronousServerSocketChannel getServerSocketChannel() {
            return channel;
        }

        @Override
        public Node getServerNode() {
            return node;
        }
    }
}
