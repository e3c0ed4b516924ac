import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

import com.litongjava.aio.Packet;
import com.litongjava.tio.core.ChannelContext;
import com.litongjava.tio.core.DefaultAioListener;
import com.litongjava.tio.core.Tio;
import com.litongjava.tio.core.TioConfig;
import com.litongjava.tio.server.ServerTioConfig;
import com.litongjava.tio.server.TioServer;
import com.litongjava.tio.server.intf.ServerAioHandler;

/**
 * The least a server on t-io 2.0.8 (com.litongjava tio-core, aio-socket 1.0.7) can do per GET /hello:
 * what no HTTP server on this t-io, configured like the stack, can do better (NOTES.md, "t-io 3.8.6 itself
 * is the /hello limit" and its 2.0.8 follow-up). It is the stack's Main without the stack: the same
 * ServerTioConfig (TIO_WORKER_THREADS aio-socket workers, 2 by default as in run.sh; no biz executor, so
 * decode and handler run on the worker that read), the same backlog (4096) and read buffer (20480), and a
 * handler that does nothing but:
 *
 * <ul>
 *   <li>decode: finds the end of the head (CRLF CRLF) and returns an empty Packet; nothing is parsed
 *       or checked (no method, path, Host, limits, framing, Connection header; a body is not read);
 *   <li>handler: Tio.send of one reply packet;
 *   <li>encode: the contract's /hello bytes with the stack's headers in the stack's order (Server,
 *       Content-Type, Content-Length, Date), the whole response prebuilt once per second.
 * </ul>
 *
 * The listener is t-io's empty DefaultAioListener: no per-connection state, no backpressure, no idle
 * timeout (t-io's heartbeat is off). Not a server to deploy: it answers every request with Hello, World!
 * and never closes a connection.
 *
 * <p>Run (JDK 25 as the harness, pinned like the benchmark, the stack's JVM flags):
 * <pre>
 * cd java-tio &amp;&amp; mvn -B -q -ntp package -DskipTests
 * PORT=18094 taskset -c 0 chrt --batch 0 java -Xms512m -Xmx512m -XX:+AlwaysPreTouch -XX:+UseParallelGC \
 *   -cp 'target/lib/*' limits/TioHelloAlone.java
 * </pre>
 * Environment: PORT (required), STACK_NAME (the Server header, default java-tio), TIO_WORKER_THREADS
 * (default 2), TIO_STAT_ON (t-io's TioConfig.statOn, default true as t-io's).
 */
public class TioHelloAlone {
    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(env("PORT", null));
        ServerTioConfig config = new ServerTioConfig("hello-alone");
        config.setServerAioHandler(new Hello(env("STACK_NAME", "java-tio")));
        config.setServerAioListener(new DefaultAioListener());
        config.setWorkerThreads(Integer.parseInt(env("TIO_WORKER_THREADS", "2")));
        config.setBacklog(4096);
        config.setHeartbeatTimeout(0);
        config.setReadBufferSize(20480);
        config.statOn = Boolean.parseBoolean(env("TIO_STAT_ON", "true"));
        new TioServer(config).start("127.0.0.1", port);
        System.out.printf("TioHelloAlone (com.litongjava tio-core 2.0.8) on 127.0.0.1:%d (worker threads %d,"
                + " statOn %s, read buffer %d)%n", port, config.getWorkerThreads(), config.statOn,
                config.getReadBufferSize());
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
    static final class Hello implements ServerAioHandler {
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
}
