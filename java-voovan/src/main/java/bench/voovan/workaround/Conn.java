package bench.voovan.workaround;

import bench.voovan.Reply;
import org.voovan.network.EventTrigger;
import org.voovan.network.IoHandler;
import org.voovan.network.IoSession;
import org.voovan.tools.buffer.ByteBufferChannel;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One connection's state: its answer order, the input Voovan has not been given yet, the output the
 * socket has not taken yet, and its time limits (README, "Protocol hygiene").
 *
 * Why this exists (each point is a Voovan 4.3.8 behaviour, README, Workarounds):
 * - Voovan writes a connection's answers with a busy loop on its IO thread until the socket has taken
 *   them all or SendTimeout has passed, then closes (SocketSelector.tcpWriteToChannel): it never stops
 *   reading from a client that does not read its answers. Here every answer is written without blocking;
 *   what the socket does not take waits in {@link #out}, and while it waits the connection's OP_READ is
 *   switched off (TCP flow control then stops the client) and its unparsed input is held back.
 * - Voovan's idle checks are dead code (SocketContext.isTimeOut returns false whenever the check is on;
 *   WebServerHandler.onFlush adds a connection to its keep-alive list only if it is already in it), and
 *   it waits for a head's missing bytes inside the parser, on the IO thread. Here one timer thread
 *   enforces HEAD_TIMEOUT_MS and IDLE_TIMEOUT_MS; the actions run on the connection's IO thread.
 *
 * Threads: fields marked "IO thread" are touched only on the connection's Voovan IO thread; the output
 * state is guarded by the lock of Voovan's send buffer (thread-safe with -DAsyncSend=true, the default),
 * which Voovan's own response serializer takes too.
 */
final class Conn {
    private static final String KEY = "bench.conn";
    /** Room kept free in Voovan's send buffer before an answer is serialized into it (its header is
     * written with a plain ByteBuffer.put: without room it throws BufferOverflowException). */
    private static final int ROOM = 4096;
    /** Answers of one read are written together, up to this many bytes. */
    private static final int BATCH = 16384;

    /** After a connection's last answer: read and drop what the client still sends for at most this long
     * before closing (README, Protocol hygiene). */
    static final int LINGER_MS = 2000;

    static long headTimeoutNanos;
    static long idleTimeoutNanos;
    static long lingerNanos;

    static final Set<Conn> ALL = ConcurrentHashMap.newKeySet();
    private static final Set<Conn> BACKLOG = ConcurrentHashMap.newKeySet();
    private static final Method SELECTION_KEY;

    static {
        try {
            // Workaround: writes busy-loop, reading never pauses; the key by reflection (README, Workarounds)
            // protected in IoSession; Voovan has no public way to change a connection's interest set
            SELECTION_KEY = IoSession.class.getDeclaredMethod("getSelectionKey");
            SELECTION_KEY.setAccessible(true);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final IoSession session;
    final Thread ioThread;
    final Exchange.Order order = new Exchange.Order();
    private final SelectionKey key;

    // IO thread
    byte[] stash;   // input not handed to Voovan yet: an incomplete head, or input held back while output waits
    int stashLen;
    boolean reqHttp11; // the request Voovan is dispatching: its version, and whether the connection ends after it
    boolean reqCloses;

    volatile long headStart;   // System.nanoTime() of the first byte of an incomplete head; 0: none
    volatile long lastActive;  // last input read or output written
    volatile boolean discard;  // all further input is dropped (after a refusal or a request that ends the connection)
    volatile boolean closing;  // output shut down (FIN sent); input dropped until the peer closes or lingerNanos pass
    volatile long lingerSince;
    volatile boolean gone;
    volatile boolean outPending;
    private volatile boolean timerPosted;

    // under the send buffer's lock
    private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
    private boolean closeAfterOutput;
    private boolean readPaused;

    private Conn(IoSession session) throws ReflectiveOperationException {
        this.session = session;
        this.ioThread = Thread.currentThread();
        this.key = (SelectionKey) SELECTION_KEY.invoke(session);
        this.lastActive = System.nanoTime();
    }

    /** The connection's state; created here (on its IO thread) for a connection accepted before Workarounds
     * installed Handler (Voovan creates its listener and starts accepting in one call, syncServe). */
    static Conn of(IoSession session) {
        Conn c = (Conn) session.getAttribute(KEY);
        return c != null ? c : attach(session);
    }

    /** The connection's state, or null; any thread. */
    static Conn get(IoSession session) {
        return (Conn) session.getAttribute(KEY);
    }

    private static Conn attach(IoSession session) {
        try {
            Conn c = new Conn(session);
            session.setAttribute(KEY, c);
            ALL.add(c);
            return c;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    // ------------------------------------------------------------------ input (IO thread)

    /** Keeps the channel's bytes for later (the channel is left empty, so Voovan does not loop on them). */
    void stashAll(ByteBufferChannel in) {
        int n = in.size();
        if (n > 0) {
            if (stash == null || stash.length < stashLen + n) {
                byte[] grown = new byte[Math.max(stashLen + n, 1024)];
                if (stash != null) System.arraycopy(stash, 0, grown, 0, stashLen);
                stash = grown;
            }
            in.get(stash, 0, n);
            stashLen += n;
            in.clear();
        }
    }

    /** Puts held-back input in front of what Voovan has read since. */
    void unstash(ByteBufferChannel in) {
        if (stashLen > 0) {
            in.writeHead(stash, 0, stashLen);
        }
        stash = null;
        stashLen = 0;
    }

    // ------------------------------------------------------------------ output (any thread)

    /**
     * Serializes one answer into Voovan's send buffer ({@code writer}) and writes it out without blocking.
     * {@code last}: the connection ends after this answer.
     */
    void answer(Runnable writer, boolean last) {
        ByteBufferChannel ch = session.getSendByteBufferChannel();
        ch.lock();
        try {
            if (gone || closing || ch.isReleased()) return;
            // Workaround: Response.send's unbounded put (README, Workarounds)
            if (ch.size() > 0 && ch.available() < ROOM) drainLocked();
            writer.run();
            if (last) closeAfterOutput = true;
            // On the IO thread with more of this read still to parse: write the answers of the read together.
            boolean more = Thread.currentThread() == ioThread && session.getReadByteBufferChannel().size() > 0
                    && ch.size() < BATCH && !last && !outPending;
            if (!more) drainLocked();
        } finally {
            ch.unlock();
        }
    }

    /** Writes what is waiting, without blocking. */
    void flush() {
        ByteBufferChannel ch = session.getSendByteBufferChannel();
        ch.lock();
        try {
            drainLocked();
        } finally {
            ch.unlock();
        }
    }

    private void drainLocked() {
        ByteBufferChannel ch = session.getSendByteBufferChannel();
        if (gone || ch.isReleased()) return;
        SocketChannel sc = (SocketChannel) session.socketContext().socketChannel();
        boolean progress = false;
        try {
            while (!out.isEmpty()) {
                ByteBuffer b = out.peek();
                if (sc.write(b) > 0) progress = true;
                if (b.hasRemaining()) break;
                out.poll();
            }
            if (out.isEmpty() && ch.size() > 0) {
                ByteBuffer bb = ch.getByteBuffer();
                try {
                    if (sc.write(bb) > 0) progress = true;
                } finally {
                    ch.compact(); // keeps only what was not written
                }
            }
            if (ch.size() > 0) { // the socket is full: keep the rest here, not in Voovan's buffer
                byte[] rest = new byte[ch.size()];
                ch.get(rest, 0, rest.length);
                ch.clear();
                out.add(ByteBuffer.wrap(rest));
            }
        } catch (IOException e) {
            closeNow();
            return;
        }
        if (progress) lastActive = System.nanoTime();
        if (out.isEmpty()) {
            if (outPending) {
                outPending = false;
                BACKLOG.remove(this);
            }
            if (readPaused) resumeReading(!closeAfterOutput);
            if (closeAfterOutput && !closing) linger(sc);
        } else if (!outPending) {
            outPending = true;
            BACKLOG.add(this);
            pauseReading();
        }
    }

    private void pauseReading() {
        readPaused = true;
        try {
            key.interestOps(0);
        } catch (RuntimeException e) { // cancelled: closing anyway
        }
    }

    private void resumeReading(boolean replay) {
        readPaused = false;
        try {
            key.interestOps(SelectionKey.OP_READ);
        } catch (RuntimeException e) {
            return;
        }
        if (replay) {
            onIoThread(() -> {
                if (stashLen > 0 && !discard && !gone) {
                    unstash(session.getReadByteBufferChannel());
                    EventTrigger.fireReceiveAsync(session);
                }
            });
        }
    }

    /**
     * Ends the connection after its last answer: FIN now (shutdownOutput), then read and drop whatever the
     * client still sends until it closes, for at most lingerNanos. Closing at once with unread input would
     * make the kernel send a reset, which can destroy the answer before the client has read it.
     */
    private void linger(SocketChannel sc) {
        closing = true;
        discard = true;
        lingerSince = System.nanoTime();
        try {
            sc.shutdownOutput();
        } catch (IOException e) {
            closeNow();
        }
    }

    void closeNow() {
        onIoThread(session::close);
    }

    void onIoThread(Runnable r) {
        try {
            session.getSocketSelector().addEvent(5, r);
        } catch (RuntimeException e) {
            session.close();
        }
    }

    // ------------------------------------------------------------------ refusals

    /** 400/408/414/431: written after any earlier answers of the connection, then the connection ends. */
    void refuse(Reply r) {
        discard = true;
        Exchange.Slot slot = order.reserve();
        order.finish(slot, () -> answer(() -> session.send(ByteBuffer.wrap(r.refusalBytes())), true));
    }

    // ------------------------------------------------------------------ time limits

    static void startTimer() {
        Thread t = new Thread(Conn::timerLoop, "conn-timer");
        t.setDaemon(true);
        t.start();
    }

    /** Every 10 ms: retry waiting output. Every 100 ms: the head, idle and linger limits of every connection. */
    private static void timerLoop() {
        long tick = 0;
        while (true) {
            try {
                Thread.sleep(10);
                for (Conn c : BACKLOG) c.flush();
                if (++tick % 10 == 0) {
                    long now = System.nanoTime();
                    for (Conn c : ALL) c.check(now);
                }
            } catch (InterruptedException e) {
                return;
            } catch (Throwable e) {
                e.printStackTrace();
            }
        }
    }

    // Workaround: Voovan's idle limits are dead code (README, Workarounds)
    private void check(long now) {
        if (gone || !session.isConnected()) {
            gone = true;
            ALL.remove(this);
            BACKLOG.remove(this);
            return;
        }
        if (timerPosted) return;
        if (closing) {
            if (now - lingerSince >= lingerNanos) post(session::close);
            return;
        }
        long hs = headStart;
        if (hs != 0) {
            if (now - hs >= headTimeoutNanos) post(this::headTimedOut);
            return;
        }
        if ((outPending || order.idle()) && now - lastActive >= idleTimeoutNanos) post(this::idleTimedOut);
    }

    private void post(Runnable r) {
        timerPosted = true;
        onIoThread(() -> {
            timerPosted = false;
            r.run();
        });
    }

    /** IO thread: a head still incomplete HEAD_TIMEOUT_MS after its first byte gets 408, then the end. */
    private void headTimedOut() {
        long hs = headStart;
        if (gone || closing || discard || hs == 0 || System.nanoTime() - hs < headTimeoutNanos) return;
        headStart = 0;
        stash = null;
        stashLen = 0;
        session.getReadByteBufferChannel().clear();
        refuse(Reply.REQUEST_TIMEOUT);
    }

    /** IO thread: no request in progress and IDLE_TIMEOUT_MS of silence: close (nothing to answer). */
    private void idleTimedOut() {
        if (gone || closing || headStart != 0) return;
        if ((outPending || order.idle()) && System.nanoTime() - lastActive >= idleTimeoutNanos) session.close();
    }

    // ------------------------------------------------------------------ Voovan's handler, wrapped

    /**
     * Wraps Voovan's WebServerHandler (SocketContext.handler(...), the socket layer's documented hook):
     * creates and forgets the per-connection state; writes out what Voovan serialized into the send
     * buffer (so that Voovan's own blocking flush finds it empty); and leaves closing to this class
     * (Voovan's onFlush would close after the bytes it wrote itself; it never writes any here).
     */
    static final class Handler implements IoHandler {
        private final IoHandler voovan;

        Handler(IoHandler voovan) {
            this.voovan = voovan;
        }

        @Override
        public Object onConnect(IoSession session) {
            Object r = voovan.onConnect(session);
            attach(session);
            return r;
        }

        @Override
        public void onDisconnect(IoSession session) {
            Conn c = get(session);
            if (c != null) {
                c.gone = true;
                ALL.remove(c);
                BACKLOG.remove(c);
            }
            voovan.onDisconnect(session);
        }

        @Override
        public Object onReceive(IoSession session, Object obj) {
            return voovan.onReceive(session, obj);
        }

        @Override
        public void onSent(IoSession session, Object obj) {
            voovan.onSent(session, obj);
            Conn c = get(session);
            if (c != null && session.getSendByteBufferChannel().size() > 0
                    && session.getReadByteBufferChannel().size() == 0) {
                c.flush();
            }
        }

        @Override
        public void onFlush(IoSession session) {
            Conn c = get(session);
            if (c != null) c.lastActive = System.nanoTime();
        }

        @Override
        public void onException(IoSession session, Exception e) {
            voovan.onException(session, e);
        }

        @Override
        public void onIdle(IoSession session) {
            voovan.onIdle(session);
        }
    }
}
