package javanetty;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One per connection, after Netty's {@link RequestDecoder}, always on the connection's event loop,
 * and it never blocks it: static answers are written at once, /sleep is a task scheduled on the
 * loop, backend reads are callbacks. Responses leave in request order (pipelining): an answer that
 * is ready while an earlier one is still pending waits in {@link #queue}. Writes are flushed once
 * per read batch (channelReadComplete), so N pipelined requests cost one syscall.
 *
 * The request is answered when its head is decoded; its body (any method) is discarded as it
 * arrives, up to {@link #MAX_BODY} bytes, beyond which the connection is closed after the answers
 * it is owed. A request the decoder refused (a failed DecoderResult) is answered 400/408/414/431
 * with Connection: close, and the connection closes.
 */
final class HttpHandler extends ChannelInboundHandlerAdapter {
    /** Request body bytes read and discarded; a longer body closes the connection after the answer. */
    static final int MAX_BODY = 64 * 1024;
    static final int ROUTE_HELLO = 0, ROUTE_SLEEP = 1, ROUTE_REDIS = 2, ROUTE_MYSQL = 3, ROUTE_MEMCACHE = 4,
            ROUTE_NONE = -1;
    private static final int SLEEP_MS = 10;
    /** Answers owed before decoding pauses; no HTTP client pipelines this many before reading one. */
    private static final int MAX_PENDING = 256;

    private final App app;
    private final Responses responses;
    private final RequestDecoder decoder;
    private final ArrayDeque<Slot> queue = new ArrayDeque<>(4);
    private ChannelHandlerContext ctx;
    private boolean reading, flushPending, closing, dead;
    /** Body bytes of the current request discarded so far. */
    private long bodyBytes;
    /** The unwritten answer bytes, as seen at the last idle event while paused (-1: none yet). */
    private long pendingAtIdle = -1;

    HttpHandler(App app, Responses responses, RequestDecoder decoder) {
        this.app = app;
        this.responses = responses;
        this.decoder = decoder;
        decoder.handler(this);
    }

    /** A response position in the connection's order; buf becomes non-null when the answer is ready. */
    private static final class Slot {
        final boolean head;
        boolean close;
        /** Responses.KEEP, CLOSE or KEEP_ALIVE: the Connection header of the answer. */
        final int connection;
        /** The answer, once ready. */
        FullHttpResponse buf;
        ScheduledFuture<?> timer;
        volatile boolean done; // read by backend threads through Reply.abandoned()

        Slot(boolean head, boolean close, int connection) {
            this.head = head;
            this.close = close;
            this.connection = connection;
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
            if (msg instanceof HttpRequest req) {
                onRequest(req);
            } else if (msg instanceof HttpContent body) {
                onBody(body);
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
        decoder.resumeIfDrained(); // the answers may have drained during this read
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (!reading) decoder.resumeIfDrained();
        ctx.fireChannelWritabilityChanged();
    }

    /**
     * A client that pipelines without reading its answers: more than the outbound high-water mark
     * unwritten, or MAX_PENDING answers owed. The decoder checks it before each request, not once
     * per read: one read can hold thousands of pipelined requests.
     */
    boolean owesTooMuch() {
        return !ctx.channel().isWritable() || queue.size() >= MAX_PENDING;
    }

    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object evt) {
        if (evt instanceof IdleStateEvent) {
            // IDLE_TIMEOUT_MS without a byte read (IdleStateHandler, first in the pipeline). While
            // decoding is paused nothing is read by design: that client is closed only once its
            // answers stop draining too (it stopped reading them).
            if (decoder.paused()) {
                // Netty's public view of the unwritten bytes: one of the two moves whenever they do
                Channel ch = ctx.channel();
                long pending = ch.bytesBeforeWritable() << 32 ^ ch.bytesBeforeUnwritable();
                if (pending != pendingAtIdle) {
                    pendingAtIdle = pending;
                    return;
                }
            }
            ctx.close();
            return;
        }
        ctx.fireUserEventTriggered(evt);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        dead = true;
        closing = true;
        for (Slot s; (s = queue.poll()) != null; ) {
            s.done = true;
            if (s.timer != null) s.timer.cancel(false);
            if (s.buf != null) ReferenceCountUtil.release(s.buf);
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
        if (closing) return; // a request after one that closes (Connection: close, a refusal) is not answered
        DecoderResult result = req.decoderResult();
        if (result.isFailure()) {
            refuse(result.cause());
            return;
        }
        bodyBytes = 0;
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        if (HttpUtil.getContentLength(req, 0L) > MAX_BODY) keepAlive = false; // answered, then closed unread
        int connection = !keepAlive ? Responses.CLOSE
                : req.protocolVersion() == HttpVersion.HTTP_1_0 ? Responses.KEEP_ALIVE : Responses.KEEP;
        String uri = req.uri();
        int q = uri.indexOf('?');
        String path = q < 0 ? uri : uri.substring(0, q);
        HttpMethod method = req.method();
        boolean head = HttpMethod.HEAD.equals(method);
        boolean allowed = head || HttpMethod.GET.equals(method);
        int route = switch (path) {
            case "/hello" -> ROUTE_HELLO;
            case "/sleep" -> ROUTE_SLEEP;
            case "/redis" -> ROUTE_REDIS;
            case "/mysql" -> ROUTE_MYSQL;
            case "/memcache" -> ROUTE_MEMCACHE;
            default -> ROUTE_NONE;
        };
        int id = route >= ROUTE_REDIS && allowed ? Query.id(uri) : -1;
        dispatch(route, head, allowed, id, !keepAlive, connection);
    }

    /** Request body bytes (any method): discarded; past MAX_BODY, or a broken body, the connection closes. */
    private void onBody(HttpContent body) {
        if (closing) return;
        bodyBytes += body.content().readableBytes();
        if (body.decoderResult().isFailure() || bodyBytes > MAX_BODY) {
            closeAfterAnswers();
        }
    }

    /** The decoder refused the request: 414, 431, 408, 400, 501 or 505, with Connection: close, then close. */
    private void refuse(Throwable cause) {
        if (dead || !ctx.channel().isActive()) return; // cut off mid-request: nobody to answer
        int which = cause instanceof TooLongHttpLineException ? Responses.URI_TOO_LONG
                : cause instanceof TooLongHttpHeaderException ? Responses.HEADER_FIELDS_TOO_LARGE
                : cause == RequestDecoder.HEAD_TIMEOUT ? Responses.REQUEST_TIMEOUT
                : cause instanceof RequestValidity.Invalid invalid ? invalid.answer
                : Responses.BAD_REQUEST;
        answer(which, false, true, Responses.CLOSE);
    }

    /** Close once every answer owed is written (they were promised without Connection: close). */
    private void closeAfterAnswers() {
        closing = true;
        Slot last = queue.peekLast();
        if (last != null) {
            last.close = true;
        } else {
            ctx.writeAndFlush(Unpooled.EMPTY_BUFFER).addListener(ChannelFutureListener.CLOSE);
        }
    }

    /** The contract's routing order: path (404), method (405), id (400), then the backend. */
    private void dispatch(int route, boolean head, boolean allowed, int id, boolean close, int connection) {
        if (route == ROUTE_NONE) {
            answer(Responses.NOT_FOUND, head, close, connection);
        } else if (!allowed) {
            answer(Responses.METHOD_NOT_ALLOWED, false, close, connection);
        } else if (route == ROUTE_HELLO) {
            answer(Responses.OK, head, close, connection);
        } else if (route == ROUTE_SLEEP) {
            sleep(head, close, connection);
        } else if (id < 0) {
            answer(Responses.BAD_REQUEST, head, close, connection);
        } else {
            read(route == ROUTE_REDIS ? app.redis : route == ROUTE_MYSQL ? app.mysql : app.memcache,
                    id, head, close, connection);
        }
    }

    // ------------------------------------------------------------------ the three kinds of answer

    /** A static answer: written now, or queued behind a pending earlier one. */
    private void answer(int which, boolean head, boolean close, int connection) {
        FullHttpResponse buf = responses.get(which, head, connection);
        if (close) closing = true;
        if (queue.isEmpty()) {
            write(buf, close);
        } else {
            Slot s = new Slot(head, close, connection);
            s.buf = buf;
            s.done = true;
            queue.add(s);
        }
    }

    /** SLEEP_MISTAKE (-Dsleep.mistake): unset or empty, Netty's timer; block-event-loop, Thread.sleep; else refused. */
    static boolean blocksEventLoop(String sleepMistake) {
        if (sleepMistake == null || sleepMistake.isEmpty()) return false;
        if (sleepMistake.equals("block-event-loop")) return true;
        throw new IllegalArgumentException("SLEEP_MISTAKE=" + sleepMistake
                + ": unknown; leave it empty (Netty's timer) or set block-event-loop (benchmarks only)");
    }

    /** /sleep: a task scheduled on this event loop 10 ms from now; nothing waits meanwhile. */
    private void sleep(boolean head, boolean close, int connection) {
        if (app.sleepBlocksEventLoop) { // the seed's mistake (the loop blocked 10 ms), kept only to measure it
            try {
                Thread.sleep(SLEEP_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            answer(Responses.SLEPT, head, close, connection);
            return;
        }
        Slot s = enqueue(head, close, connection);
        s.timer = ctx.executor().schedule(() -> {
            s.done = true;
            if (dead) return;
            s.buf = responses.get(Responses.SLEPT, s.head, s.connection);
            drain();
        }, SLEEP_MS, TimeUnit.MILLISECONDS);
    }

    /** One backend read, bounded by BACKEND_TIMEOUT_MS by a timer on this loop: whichever comes first answers. */
    private void read(Backend backend, int id, boolean head, boolean close, int connection) {
        Slot s = enqueue(head, close, connection);
        EventLoop loop = ctx.channel().eventLoop();
        s.timer = loop.schedule(() -> finish(s, id, null, TIMEOUT), app.timeoutMs, TimeUnit.MILLISECONDS);
        backend.get(id, loop, new Backend.Reply() {
            @Override
            public void done(byte[] message, Throwable error) {
                if (loop.inEventLoop()) {
                    finish(s, id, message, error);
                } else {
                    loop.execute(() -> finish(s, id, message, error));
                }
            }

            @Override
            public boolean abandoned() {
                return s.done;
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
            s.buf = message != null ? responses.json(ctx.alloc(), id, message, s.head, s.connection)
                    : staticBuf(Responses.NOT_FOUND, s);
        } else {
            s.buf = staticBuf(Failures.unavailable(error) ? Responses.UNAVAILABLE : Responses.INTERNAL_ERROR, s);
            if (!Failures.unavailable(error)) System.err.println("java-netty: backend error: " + error);
        }
        drain();
    }

    private FullHttpResponse staticBuf(int which, Slot s) {
        return responses.get(which, s.head, s.connection);
    }

    private Slot enqueue(boolean head, boolean close, int connection) {
        if (close) closing = true;
        Slot s = new Slot(head, close, connection);
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
            if (reading) { // flushed once in channelReadComplete
                flushPending = true;
            } else {
                ctx.flush();
            }
        }
        if (!reading) decoder.resumeIfDrained();
    }

    private void write(FullHttpResponse buf, boolean close) {
        if (close) {
            ctx.writeAndFlush(buf).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.write(buf, ctx.voidPromise());
            if (reading) { // flushed once in channelReadComplete
                flushPending = true;
            } else {
                ctx.flush();
            }
        }
    }
}
