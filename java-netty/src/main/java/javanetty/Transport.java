package javanetty;

import io.netty.channel.IoHandlerFactory;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringServerSocketChannel;

/**
 * The I/O transport, chosen once at start: io_uring, else epoll, else NIO.
 * -Dtransport=io_uring|epoll|nio forces one (and fails if it is not available here).
 */
record Transport(String name, IoHandlerFactory factory, Class<? extends ServerChannel> serverChannel) {

    static Transport choose(String wanted) {
        StringBuilder why = new StringBuilder();
        if (wanted.equals("auto") || wanted.equals("io_uring")) {
            if (IoUring.isAvailable()) {
                return new Transport("io_uring", IoUringIoHandler.newFactory(),
                        IoUringServerSocketChannel.class);
            }
            why.append("io_uring unavailable: ").append(IoUring.unavailabilityCause()).append("; ");
            if (wanted.equals("io_uring")) throw new IllegalStateException(why.toString());
        }
        if (wanted.equals("auto") || wanted.equals("epoll")) {
            if (Epoll.isAvailable()) {
                return new Transport("epoll", EpollIoHandler.newFactory(),
                        EpollServerSocketChannel.class);
            }
            why.append("epoll unavailable: ").append(Epoll.unavailabilityCause()).append("; ");
            if (wanted.equals("epoll")) throw new IllegalStateException(why.toString());
        }
        if (wanted.equals("auto") || wanted.equals("nio")) {
            if (why.length() > 0) System.err.println("java-netty: falling back to NIO (" + why + ")");
            return new Transport("nio", NioIoHandler.newFactory(), NioServerSocketChannel.class);
        }
        throw new IllegalArgumentException("-Dtransport must be auto, io_uring, epoll or nio, not " + wanted);
    }
}
