package javanetty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One per connection, always on the connection's event loop, and it never blocks it:
 * static answers are written at once, /sleep is a task scheduled on the loop, backend reads are
 * callbacks. Responses leave in request order (pipelining): an answer that is ready while an
 * earlier one is still pending waits in {@link #queue}. Writes are flushed once per read batch
 * (channelReadComplete), so N pipelined requests cost one syscall.
 *
 * Requests are parsed here, straight from the socket's bytes (see {@link #decode}): request line,
 * then only the headers that matter (Connection, Content-Length, Transfer-Encoding); no request
 * object, no header map, no String. With -Dparser=netty, Netty's HttpRequestDecoder sits in front
 * instead and {@link #onRequest(HttpRequest)} gets its HttpRequest objects (kept for comparison,
 * see README).
 */
final class HttpHandler extends ByteToMessageDecoder {
    /** -Dflush=each flushes every response on its own (for comparison); the default batches per read. */
    private static final boolean BATCH_FLUSH = !"each".equals(System.getProperty("flush", "batched"));
    private static final int MAX_HEAD = 16 * 1024;
    private static final int MAX_BODY = 64 * 1024;
    static final int ROUTE_HELLO = 0, ROUTE_SLEEP = 1, ROUTE_REDIS = 2, ROUTE_MYSQL = 3, ROUTE_MEMCACHE = 4,
            ROUTE_NONE = -1;
    private static final byte[][] PATHS = {
            "/hello".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
            "/sleep".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
            "/redis".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
            "/mysql".getBytes(java.nio.charset.StandardCharsets.US_ASCII),
            "/memcache".getBytes(java.nio.charset.StandardCharsets.US_ASCII)};
    private static final int SLEEP_MS = 10;
    /** Answers owed before decoding pauses; no HTTP client pipelines this many before reading one. */
    private static final int MAX_PENDING = 256;
    /** Request bytes read while paused before the connection is closed (io_uring keeps reading, below). */
    private static final int MAX_PAUSED_BYTES = 256 * 1024;

    private final App app;
    private final Responses responses;
    private final ArrayDeque<Slot> queue = new ArrayDeque<>(4);
    private ChannelHandlerContext ctx;
    private boolean reading, flushPending, closing, dead;
    /** Decoding stopped (and autoRead off) until the answers owed drain: a client that does not read. */
    private boolean paused;

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
        volatile boolean done; // read by backend threads through Reply.abandoned()

        Slot(boolean head, boolean close, byte[] extraHeader) {
            this.head = head;
            this.close = close;
            this.extraHeader = extraHeader;
        }
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        super.handlerAdded(ctx);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        reading = true;
        if (msg instanceof io.netty.buffer.ByteBuf) {
            super.channelRead(ctx, msg); // cumulates and calls decode()
            if (paused && internalBuffer().readableBytes() > MAX_PAUSED_BYTES) {
                // io_uring's multishot receive goes on delivering after setAutoRead(false): 70
                // such clients grew their cumulations to 12-20 MB each and ran direct memory out.
                closing = true;
                ctx.close();
            }
            return;
        }
        try {
            if (msg instanceof HttpRequest req && !closing) {
                onRequest(req);
            }
        } finally {
            ReferenceCountUtil.release(msg);
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        reading = false;
        if (flushPending) {
            flushPending = false;
            ctx.flush();
        }
        if (owesTooMuch()) {
            pause();
        }
        if (paused) {
            // Not super: ByteToMessageDecoder asks for another read when autoRead is off and
            // nothing was decoded, and the cumulation grew until direct memory ran out.
            discardSomeReadBytes();
            ctx.fireChannelReadComplete();
            resumeIfDrained(); // the answers may have drained during this read, when resuming waits
        } else {
            super.channelReadComplete(ctx);
        }
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) throws Exception {
        resumeIfDrained();
        super.channelWritabilityChanged(ctx);
    }

    /**
     * A client that pipelines without reading its answers: more than the outbound high-water mark
     * unwritten, or MAX_PENDING answers owed. Checked before each request, not once per read batch:
     * one batch can hold thousands of pipelined requests, and 70 such clients ran the 64 MB heap
     * out and killed the event loop (README, "A client that does not read").
     */
    private boolean owesTooMuch() {
        return !ctx.channel().isWritable() || queue.size() >= MAX_PENDING;
    }

    /** Stop reading; the requests already read stay cumulated until the answers drain. */
    private void pause() {
        paused = true;
        ctx.channel().config().setAutoRead(false);
    }

    private void resumeIfDrained() {
        if (!paused || reading || dead || owesTooMuch()) {
            return;
        }
        paused = false;
        ctx.channel().config().setAutoRead(true);
        if (internalBuffer().isReadable()) {
            try {
                // decode what is already cumulated: the client may have sent it all and be waiting
                channelRead(ctx, io.netty.buffer.Unpooled.EMPTY_BUFFER);
                channelReadComplete(ctx);
            } catch (Exception e) {
                ctx.fireExceptionCaught(e);
            }
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        dead = true;
        closing = true;
        for (Slot s; (s = queue.poll()) != null; ) {
            s.done = true;
            if (s.timer != null) s.timer.cancel(false);
            if (s.buf != null) s.buf.release();
        }
        super.channelInactive(ctx);
    }

    /**
     * Parses every complete request in {@code in} and answers it. A request is complete when its
     * empty line and its Content-Length body (if any) have arrived; until then the bytes stay
     * cumulated. Nothing is emitted to {@code out}: this is the last handler.
     */
    @Override
    protected void decode(ChannelHandlerContext ctx, io.netty.buffer.ByteBuf in, List<Object> out) {
        while (in.isReadable()) {
            if (closing) {
                in.skipBytes(in.readableBytes());
                return;
            }
            if (owesTooMuch()) {
                pause();
                return;
            }
            // Empty lines before a request line are ignored (RFC 9112, 2.2).
            byte first = in.getByte(in.readerIndex());
            if (first == '\r' || first == '\n') {
                in.skipBytes(1);
                continue;
            }
            int start = in.readerIndex();
            int limit = in.writerIndex();
            // Request line: METHOD SP target SP HTTP/1.x
            int eol = in.indexOf(start, limit, (byte) '\n');
            if (eol < 0) {
                if (limit - start > MAX_HEAD) malformed();
                return;
            }
            int sp1 = in.indexOf(start, eol, (byte) ' ');
            int sp2 = sp1 < 0 ? -1 : in.indexOf(sp1 + 1, eol, (byte) ' ');
            int lineEnd = in.getByte(eol - 1) == '\r' ? eol - 1 : eol;
            if (sp1 <= start || sp2 <= sp1 + 1 || lineEnd - sp2 - 1 != 8 || !isHttp1(in, sp2 + 1)) {
                malformed();
                return;
            }
            boolean http10 = in.getByte(sp2 + 8) == '0';
            // Headers: only Connection, Content-Length and Transfer-Encoding matter here.
            boolean close = http10, keepAlive10 = false, chunked = false;
            long contentLength = 0;
            int pos = eol + 1;
            while (true) {
                int nl = in.indexOf(pos, limit, (byte) '\n');
                if (nl < 0) {
                    if (limit - start > MAX_HEAD) malformed();
                    return; // the head is not complete yet
                }
                int lineStart = pos;
                int end = nl > lineStart && in.getByte(nl - 1) == '\r' ? nl - 1 : nl;
                pos = nl + 1;
                if (end == lineStart) break; // the empty line ends the head
                int colon = in.indexOf(lineStart, end, (byte) ':');
                if (colon < 0) continue; // not a header line: ignored
                int nameStart = lineStart;
                int v = colon + 1;
                while (v < end && (in.getByte(v) == ' ' || in.getByte(v) == '\t')) v++;
                int vEnd = end;
                while (vEnd > v && (in.getByte(vEnd - 1) == ' ' || in.getByte(vEnd - 1) == '\t')) vEnd--;
                if (nameIs(in, nameStart, colon, "connection")) {
                    if (contains(in, v, vEnd, "close")) close = true;
                    else if (contains(in, v, vEnd, "keep-alive") && http10) { close = false; keepAlive10 = true; }
                } else if (nameIs(in, nameStart, colon, "content-length")) {
                    contentLength = number(in, v, vEnd);
                } else if (nameIs(in, nameStart, colon, "transfer-encoding")) {
                    chunked = true;
                }
            }
            if (contentLength < 0 || contentLength > MAX_BODY) {
                malformed();
                return;
            }
            if (limit - pos < contentLength) return; // wait for the body (which is ignored)
            // Request bodies are not part of the contract; a chunked one cannot be skipped without
            // decoding it, so that request is answered and the connection closed after it.
            if (chunked) close = true;
            int targetStart = sp1 + 1;
            int targetEnd = sp2;
            int q = in.indexOf(targetStart, targetEnd, (byte) '?');
            int pathEnd = q < 0 ? targetEnd : q;
            boolean head = sp1 - start == 4 && startsWith(in, start, "HEAD");
            boolean allowed = head || (sp1 - start == 3 && startsWith(in, start, "GET"));
            int route = route(in, targetStart, pathEnd);
            int id = route >= ROUTE_REDIS && allowed ? (q < 0 ? -1 : Query.id(in, q + 1, targetEnd)) : -1;
            in.readerIndex(pos + (int) contentLength);
            byte[] extra = close ? Responses.CLOSE : keepAlive10 ? Responses.KEEP_ALIVE : null;
            dispatch(route, head, allowed, id, close, extra);
        }
    }

    private void malformed() {
        answer(Responses.BAD_REQUEST, false, true, Responses.CLOSE);
    }

    private static boolean isHttp1(io.netty.buffer.ByteBuf in, int at) {
        return startsWith(in, at, "HTTP/1.") && Character.isDigit(in.getByte(at + 7));
    }

    private static int route(io.netty.buffer.ByteBuf in, int from, int to) {
        int length = to - from;
        for (int r = 0; r < PATHS.length; r++) {
            byte[] p = PATHS[r];
            if (p.length == length && startsWith(in, from, p)) return r;
        }
        return ROUTE_NONE;
    }

    private static boolean startsWith(io.netty.buffer.ByteBuf in, int at, byte[] s) {
        for (int i = 0; i < s.length; i++) if (in.getByte(at + i) != s[i]) return false;
        return true;
    }

    private static boolean startsWith(io.netty.buffer.ByteBuf in, int at, String s) {
        for (int i = 0; i < s.length(); i++) if (in.getByte(at + i) != s.charAt(i)) return false;
        return true;
    }

    /** Whether in[from, to) equals the lower-case ASCII {@code name}, ignoring case. */
    private static boolean nameIs(io.netty.buffer.ByteBuf in, int from, int to, String name) {
        if (to - from != name.length()) return false;
        for (int i = 0; i < name.length(); i++) {
            if ((in.getByte(from + i) | 0x20) != name.charAt(i)) return false;
        }
        return true;
    }

    /** Whether the comma-separated list in[from, to) holds {@code token} (lower-case), ignoring case. */
    private static boolean contains(io.netty.buffer.ByteBuf in, int from, int to, String token) {
        int n = token.length();
        outer:
        for (int i = from; i + n <= to; i++) {
            for (int j = 0; j < n; j++) {
                if ((in.getByte(i + j) | 0x20) != token.charAt(j)) continue outer;
            }
            boolean before = i == from || in.getByte(i - 1) == ',' || in.getByte(i - 1) == ' ';
            boolean after = i + n == to || in.getByte(i + n) == ',' || in.getByte(i + n) == ' ';
            if (before && after) return true;
        }
        return false;
    }

    private static long number(io.netty.buffer.ByteBuf in, int from, int to) {
        if (from == to || to - from > 12) return -1;
        long v = 0;
        for (int i = from; i < to; i++) {
            byte c = in.getByte(i);
            if (c < '0' || c > '9') return -1;
            v = v * 10 + (c - '0');
        }
        return v;
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        // A reset by the peer is ordinary; anything else is logged, and either way the connection ends.
        if (!(cause instanceof IOException)) {
            System.err.println("java-netty: " + cause);
        }
        ctx.close();
    }

    /** -Dparser=netty: the same request, from Netty's HttpRequestDecoder. */
    private void onRequest(HttpRequest req) {
        if (req.decoderResult().isFailure()) {
            malformed();
            return;
        }
        boolean keepAlive = HttpUtil.isKeepAlive(req);
        byte[] extra = !keepAlive ? Responses.CLOSE
                : req.protocolVersion() == HttpVersion.HTTP_1_0 ? Responses.KEEP_ALIVE : null;
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
        int id = route >= ROUTE_REDIS && allowed ? Query.id(uri, q) : -1;
        dispatch(route, head, allowed, id, !keepAlive, extra);
    }

    /** The contract's routing order: path (404), method (405), id (400), then the backend. */
    private void dispatch(int route, boolean head, boolean allowed, int id, boolean close, byte[] extra) {
        if (route == ROUTE_NONE) {
            answer(Responses.NOT_FOUND, head, close, extra);
        } else if (!allowed) {
            answer(Responses.METHOD_NOT_ALLOWED, false, close, extra);
        } else if (route == ROUTE_HELLO) {
            answer(Responses.OK, head, close, extra);
        } else if (route == ROUTE_SLEEP) {
            sleep(head, close, extra);
        } else if (id < 0) {
            answer(Responses.BAD_REQUEST, head, close, extra);
        } else {
            read(route == ROUTE_REDIS ? app.redis : route == ROUTE_MYSQL ? app.mysql : app.memcache,
                    id, head, close, extra);
        }
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
            if (reading && BATCH_FLUSH) {
                flushPending = true;
            } else {
                ctx.flush();
            }
        }
        resumeIfDrained();
    }

    private void write(ByteBuf buf, boolean close) {
        if (close) {
            ctx.writeAndFlush(buf).addListener(ChannelFutureListener.CLOSE);
        } else {
            ctx.write(buf, ctx.voidPromise());
            if (reading && BATCH_FLUSH) {
                flushPending = true;
            } else {
                ctx.flush();
            }
        }
    }
}
