package javatio;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;

import org.tio.core.Node;
import org.tio.server.TioServer;
import org.tio.server.TioServerConfig;

/**
 * TioServer.start() binds with backlog 0, which the JDK turns into 50: with more simultaneous
 * connects than that the kernel drops SYNs and clients wait for retransmits (the seed article's
 * "t-io fails at ab -c 100"). This binds the same way with a real backlog; everything after the
 * accept is t-io's own AcceptCompletionHandler, which reads the channel and node back through the
 * getters overridden here.
 *
 * <p>The channel group is t-io's ({@code withThreadPool(groupExecutor)}: the JDK polls on an internal
 * thread of its own and hands every completion to t-io's group pool) unless {@code fixedThreads} &gt; 0:
 * then it is the JDK's fixed-thread-pool group of that many threads, which poll themselves and run a
 * read's completion on the thread that polled it (README, Tuning: TIO_AIO_GROUP).
 */
final class BacklogTioServer extends TioServer {
    private final int backlog;
    private final int fixedThreads;
    private AsynchronousChannelGroup group;
    private AsynchronousServerSocketChannel channel;
    private Node node;

    BacklogTioServer(TioServerConfig config, int backlog, int fixedThreads) {
        super(config);
        this.backlog = backlog;
        this.fixedThreads = fixedThreads;
    }

    @Override
    public void start(String ip, int port) throws IOException {
        TioServerConfig config = getTioServerConfig();
        node = new Node(ip, port);
        group = fixedThreads > 0
                ? AsynchronousChannelGroup.withFixedThreadPool(fixedThreads,
                        Thread.ofPlatform().name("tio-aio-", 0).priority(Thread.MAX_PRIORITY).factory())
                : AsynchronousChannelGroup.withThreadPool(config.groupExecutor);
        channel = AsynchronousServerSocketChannel.open(group);
        channel.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        channel.setOption(StandardSocketOptions.SO_RCVBUF, 64 * 1024);
        channel.bind(new InetSocketAddress(ip, port), backlog);
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

    @Override
    public boolean stop() {
        setWaitingStop(true);
        try {
            channel.close();
            group.shutdownNow();
        } catch (IOException ignored) {
            return false;
        }
        return true;
    }
}
