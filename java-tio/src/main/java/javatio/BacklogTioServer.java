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
 * Workaround: t-io binds with backlog 0, which the JDK makes 50 (README, Workarounds)
 */
final class BacklogTioServer extends TioServer {
    private final int backlog;
    private AsynchronousChannelGroup group;
    private AsynchronousServerSocketChannel channel;
    private Node node;

    BacklogTioServer(TioServerConfig config, int backlog) {
        super(config);
        this.backlog = backlog;
    }

    @Override
    public void start(String ip, int port) throws IOException {
        TioServerConfig config = getTioServerConfig();
        node = new Node(ip, port);
        group = AsynchronousChannelGroup.withThreadPool(config.groupExecutor);
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
