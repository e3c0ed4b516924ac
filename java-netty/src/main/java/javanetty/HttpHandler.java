package javanetty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One per connection, always on the connection's event loop, and it never blocks it:
 * static answers are written at once, /sleep is a task scheduled on the loop, backend reads are
 * callbacks. Responses leave in request order (pipelining): an answer that is ready while an
 * earlier one is still pending waits in {@link #queue}. Writes are flushed once per read batch
 * (channelReadComplete), so N pipelined requests cost one syscall.
 */
final class HttpHandler extends ChannelInboundHandlerAdapter {
    private static final int SLEEP_MS = 10;

    private final App app;
    private final Responses responses;
    private final ArrayDeque<Slot> queue = new ArrayDeque<>(4);
    private ChannelHandlerContext ctx;
    private boolean reading, flushPending, closing, dead;

    HttpHandler(App app, Responses responses) {
        this.app = app;
        this.responses = responses;
    }

    /** A response position in the connection's order; buf becomes non-null when the answer is ready. */
    private static final class Slot {
        final boolean head;
        final boolean close;
        final byte[] extraHeader;
        ByteBuf buf;
        ScheduledFuture<?> timer;
        boolean done;

        Slot(boolean head, boolean close, byte[] extraHeader) {
            this.head = head;
            this.close = close;
            this.extraHeader = extraHeader;
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        this.ctx = ctx;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        reading = true;
        try {
            if (msg instanceof HttpRequest req && !closing) {
                onRequest(req);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        reading = false;
        if (flushPending) {
            flushPending = false;
            ctx.flush();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        dead = true;
        for (Slot s; (s = queue.poll()) != null; ) {
            s.done = true;
            if (s.timer != null) s.timer.cancel(false);
            if (s.buf != null) s.buf.release();
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A reset by the peer is ordinary; anything else is logged, and either way the connection ends.
        if (!(cause instanceof IOException)) {
            System.err.println("java-netty: " + cause);
        }
        ctx.close();
    }

    private void onRequest(HttpRequest req) {
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        byte[] extra = !keepAlive ? Responses.CLOSE
                : req.protocolVersion() == HttpVersion.HTTP_1_0 ? Responses.KEEP_ALIVE : null;
        if (req.decoderResult().isFailure()) {
            answer(Responses.BAD_REQUEST, false, true, Responses.CLOSE);
            return;
        }
        String uri = req.uri();
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        HttpMethod method = req.method();
        boolean head = method == HttpMethod.HEAD || HttpMethod.HEAD.equals(method);
        boolean allowed = head || method == HttpMethod.GET || HttpMethod.GET.equals(method);
        Backend backend;
        switch (path) {
            case "/hello" -> {
                answer(allowed ? Responses.OK : Responses.METHOD_NOT_ALLOWED, head, !keepAlive, extra);
                return;
            }
            case "/sleep" -> {
                if (!allowed) {
                    answer(Responses.METHOD_NOT_ALLOWED, false, !keepAlive, extra);
                } else {
                    sleep(head, !keepAlive, extra);
                }
                return;
            }
            case "/redis" -> backend = app.redis;
            case "/mysql" -> backend = app.mysql;
            case "/memcache" -> backend = app.memcache;
            default -> {
                answer(Responses.NOT_FOUND, head, !keepAlive, extra);
                return;
            }
        }
        if (!allowed) {
            answer(Responses.METHOD_NOT_ALLOWED, false, !keepAlive, extra);
            return;
        }
        int id = Query.id(uri, q);
        if (id < 0) {
            answer(Responses.BAD_REQUEST, head, !keepAlive, extra);
            return;
        }
        read(backend, id, head, !keepAlive, extra);
    }

    // ------------------------------------------------------------------ the three kinds of answer

    /** A static answer: written now, or queued behind a pending earlier one. */
    private void answer(int which, boolean head, boolean close, byte[] extra) {
        ByteBuf buf = extra == null ? responses.get(which, head) : responses.build(ctx.alloc(), which, head, extra);
        if (close) closing = true;
        if (queue.isEmpty()) {
            write(buf, close);
        } else {
            Slot s = new Slot(head, close, extra);
            s.buf = buf;
            s.done = true;
            queue.add(s);
        }
    }

    /** /sleep: a task scheduled on this event loop 10 ms from now; nothing waits meanwhile. */
    private void sleep(boolean head, boolean close, byte[] extra) {
        Slot s = enqueue(head, close, extra);
        ctx.executor().schedule(() -> {
            s.done = true;
            if (dead) return;
            s.buf = s.extraHeader == null ? responses.get(Responses.SLEPT, s.head)
                    : responses.build(ctx.alloc(), Responses.SLEPT, s.head, s.extraHeader);
            drain();
        }, SLEEP_MS, TimeUnit.MILLISECONDS);
    }

    /** One backend read, bounded by BACKEND_TIMEOUT_MS by a timer on this loop: whichever comes first answers. */
    private void read(Backend backend, int id, boolean head, boolean close, byte[] extra) {
        Slot s = enqueue(head, close, extra);
        EventLoop loop = ctx.channel().eventLoop();
        s.timer = loop.schedule(() -> finish(s, id, null, TIMEOUT), app.timeoutMs, TimeUnit.MILLISECONDS);
        backend.get(id, loop, (message, error) -> {
            if (loop.inEventLoop()) {
                finish(s, id, message, error);
            } else {
                loop.execute(() -> finish(s, id, message, error));
            }
        });
    }

    private static final TimeoutException TIMEOUT = new TimeoutException("backend slower than BACKEND_TIMEOUT_MS") {
        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    };

    private void finish(Slot s, int id, byte[] message, Throwable error) {
        if (s.done) return; // the timer won (or the reply did); the other one is dropped here
        s.done = true;
        if (s.timer != null && error != TIMEOUT) s.timer.cancel(false);
        if (dead) return;
        if (error == null) {
            s.buf = message != null ? responses.json(ctx.alloc(), id, message, s.head, s.extraHeader)
                    : staticBuf(Responses.NOT_FOUND, s);
        } else {
            s.buf = staticBuf(Failures.unavailable(error) ? Responses.UNAVAILABLE : Responses.INTERNAL_ERROR, s);
            if (!Failures.unavailable(error)) System.err.println("java-netty: backend error: " + error);
        }
        drain();
    }

    private ByteBuf staticBuf(int which, Slot s) {
        return s.extraHeader == null ? responses.get(which, s.head)
                : responses.build(ctx.alloc(), which, s.head, s.extraHeader);
    }

    private Slot enqueue(boolean head, boolean close, byte[] extra) {
        if (close) closing = true;
        Slot s = new Slot(head, close, extra);
        queue.add(s);
        return s;
    }

    /** Writes every ready answer at the head of the queue, in order. */
    private void drain() {
        boolean wrote = false;
        for (Slot s; (s = queue.peek()) != null && s.buf != null; ) {
            queue.poll();
            if (s.close) {
                ctx.writeAndFlush(s.buf).addListener(ChannelFutureListener.CLOSE);
                return;
            }
            ctx.write(s.buf, ctx.voidPromise());
            wrote = true;
        }
        if (wrote) {
            if (reading) {
                flushPending = true;
            } else {
                ctx.flush();
            }
        }
    }

    private void write(ByteBuf buf, boolean close) {
        if (close) {
            ctx.writeAndFlush(buf).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.write(buf, ctx.voidPromise());
            if (reading) {
                flushPending = true;
            } else {
                ctx.flush();
            }
        }
    }
}
