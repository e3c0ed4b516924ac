package javatio;

import java.io.IOException;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The connection's socket as t-io sees it (ChannelContext.asynchronousSocketChannel, a public field set
 * in Listener.onAfterConnected): every call goes to the real channel, except that a read can be held
 * back. t-io has no backpressure: ReadCompletionHandler.completed issues the next read as soon as it has
 * decoded the last one, whatever is still queued for sending. Holding the read back is what makes the kernel's receive window close on a
 * client that does not read its answers. The first read (AcceptCompletionHandler) goes to the real
 * channel; every later one (ReadCompletionHandler.read) comes through here.
 * Workaround: t-io has no backpressure (README, Workarounds)
 */
final class Gate extends AsynchronousSocketChannel {
    private final AsynchronousSocketChannel ch;
    private final Executor executor;
    private boolean paused;   // no read while the client owes us reading (backpressure)
    private boolean stopped;  // no read ever again (the connection closes after its last answer)
    private Runnable held;    // the read t-io asked for while paused or stopped

    Gate(AsynchronousSocketChannel ch, Executor executor) {
        super(ch.provider());
        this.ch = ch;
        this.executor = executor;
    }

    synchronized void pause() {
        paused = true;
    }

    synchronized void stop() {
        stopped = true;
    }

    /** Issue the held read, if any, on the executor (not on the thread that completed a write). */
    void resume() {
        Runnable r;
        synchronized (this) {
            paused = false;
            if (stopped || held == null) {
                return;
            }
            r = held;
            held = null;
        }
        executor.execute(r);
    }

    @Override
    public <A> void read(ByteBuffer dst, long timeout, TimeUnit unit, A attachment,
                         CompletionHandler<Integer, ? super A> handler) {
        synchronized (this) {
            if (paused || stopped) {
                held = () -> ch.read(dst, timeout, unit, attachment, handler);
                return;
            }
        }
        ch.read(dst, timeout, unit, attachment, handler);
    }

    // ---- everything else is the real channel's

    @Override public Future<Integer> read(ByteBuffer dst) { return ch.read(dst); }
    @Override public <A> void read(ByteBuffer[] dsts, int offset, int length, long timeout, TimeUnit unit, A attachment,
                                   CompletionHandler<Long, ? super A> handler) {
        ch.read(dsts, offset, length, timeout, unit, attachment, handler);
    }
    @Override public <A> void write(ByteBuffer src, long timeout, TimeUnit unit, A attachment,
                                    CompletionHandler<Integer, ? super A> handler) {
        ch.write(src, timeout, unit, attachment, handler);
    }
    @Override public Future<Integer> write(ByteBuffer src) { return ch.write(src); }
    @Override public <A> void write(ByteBuffer[] srcs, int offset, int length, long timeout, TimeUnit unit, A attachment,
                                    CompletionHandler<Long, ? super A> handler) {
        ch.write(srcs, offset, length, timeout, unit, attachment, handler);
    }
    @Override public AsynchronousSocketChannel bind(SocketAddress local) throws IOException { ch.bind(local); return this; }
    @Override public <T> AsynchronousSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        ch.setOption(name, value);
        return this;
    }
    @Override public <T> T getOption(SocketOption<T> name) throws IOException { return ch.getOption(name); }
    @Override public Set<SocketOption<?>> supportedOptions() { return ch.supportedOptions(); }
    @Override public AsynchronousSocketChannel shutdownInput() throws IOException { ch.shutdownInput(); return this; }
    @Override public AsynchronousSocketChannel shutdownOutput() throws IOException { ch.shutdownOutput(); return this; }
    @Override public SocketAddress getRemoteAddress() throws IOException { return ch.getRemoteAddress(); }
    @Override public SocketAddress getLocalAddress() throws IOException { return ch.getLocalAddress(); }
    @Override public <A> void connect(SocketAddress remote, A attachment, CompletionHandler<Void, ? super A> handler) {
        ch.connect(remote, attachment, handler);
    }
    @Override public Future<Void> connect(SocketAddress remote) { return ch.connect(remote); }
    @Override public boolean isOpen() { return ch.isOpen(); }
    @Override public void close() throws IOException { ch.close(); }
}
