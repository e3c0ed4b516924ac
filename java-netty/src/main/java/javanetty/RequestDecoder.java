package javanetty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpRequestDecoder;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.util.AsciiString;
import io.netty.util.ByteProcessor;
import io.netty.util.concurrent.ScheduledFuture;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Netty's own {@link HttpRequestDecoder} (one per connection), with its size limits and its RFC 9112
 * checks as configured in {@link #config()}, plus what the codec has no setting for, each shown by
 * Netty 4.2.18's source (README, Workarounds, has the links):
 * <ul>
 * <li>the contract's head limit in bytes on the wire: Netty counts the request line and the header
 *     lines separately and without their CRLFs ({@code HttpObjectDecoder.java:1336}, {@code newSize =
 *     endOfSeqIncluded - readerIndex}), so the head's real size is counted here, from the bytes the
 *     decoder consumes until it emits the request (over {@link #MAX_HEAD}: 431);</li>
 * <li>a second Content-Length in HTTP/1.0, which Netty frames by the first one
 *     ({@code HttpUtil.java:635}, {@code multipleContentLengths && !isHttp10OrEarlier}): 400;</li>
 * <li>the head timeout, which {@code HttpDecoderConfig} has no field for (its settings,
 *     {@code HttpDecoderConfig.java:28-38}, are sizes and flags): a request still incomplete
 *     {@code HEAD_TIMEOUT_MS} after the read that brought its first incomplete part is refused (408
 *     mid-head; a close mid-body, the answer being sent);</li>
 * <li>backpressure: no new request is decoded while the connection owes too much
 *     ({@link HttpHandler#owesTooMuch()}), and autoRead is off meanwhile; {@code ByteToMessageDecoder}
 *     would ask for one more read when nothing was decoded ({@code ByteToMessageDecoder.java:369}), and
 *     an io_uring receive already submitted completes anyway (netty/netty#14860).</li>
 * </ul>
 * The contract's request validity, which Netty leaves to the application (Host, the target, the
 * method's length and CONNECT, the version's spelling), is {@link RequestValidity}'s. Every refusal reaches
 * {@link HttpHandler} as a message with a failed {@link DecoderResult}, the way Netty reports its own
 * decode failures.
 */
final class RequestDecoder extends HttpRequestDecoder {
    /** The contract: a longer request line (without its CRLF) is a 414. */
    static final int MAX_REQUEST_LINE = 8192;
    /** The contract: a longer head (request line, header lines, every CRLF) is a 431; anything up to it is served. */
    static final int MAX_HEAD = 16384;
    /** Bytes received while paused before the connection is closed (a read already submitted still completes). */
    private static final int MAX_PAUSED_BYTES = 256 * 1024;

    static final DecoderException HEAD_TIMEOUT = new Refusal("request head not complete within HEAD_TIMEOUT_MS");
    static final DecoderException BODY_TIMEOUT = new Refusal("request body not complete within HEAD_TIMEOUT_MS");
    private static final DecoderException DUPLICATE_CONTENT_LENGTH = new Refusal("more than one Content-Length");

    static HttpDecoderConfig config() {
        return new HttpDecoderConfig()
                .setMaxInitialLineLength(MAX_REQUEST_LINE) // TooLongHttpLineException -> 414
                // Netty's count (header lines without CRLFs) is never above the wire count of
                // decode() below, so this only bounds one header line still waiting for its LF.
                .setMaxHeaderSize(MAX_HEAD) // TooLongHttpHeaderException -> 431
                .setValidateHeaders(true) // field names must be tokens, values free of CTLs -> 400
                .setStrictLineParsing(true) // a bare LF is not a line end -> 400
                .setUseRfc9112TransferEncoding(true) // TE with CL, TE in HTTP/1.0, TE not ending in chunked -> 400
                .setAllowDuplicateContentLengths(false); // HTTP/1.1: a second Content-Length -> 400
    }

    private final long headTimeoutNanos;
    private ChannelHandlerContext ctx;
    private HttpHandler handler;

    /** Between the first byte of a head and the request it makes; then its body until LastHttpContent. */
    private boolean inHead, inBody;
    /** A refusal was emitted: everything that follows is discarded until the connection closes. */
    private boolean failed;
    /** No request is decoded until the answers owed drain (autoRead is off meanwhile). */
    private boolean paused;
    /** Bytes of the current head consumed so far, its Content-Length fields and its Host fields. */
    private int headBytes, contentLengthFields, hostFields;
    /** The current request is timed since startNanos; one timer per connection, re-armed lazily. */
    private boolean timed;
    private long startNanos;
    private ScheduledFuture<?> timer;

    RequestDecoder(long headTimeoutMs) {
        super(config());
        this.headTimeoutNanos = TimeUnit.MILLISECONDS.toNanos(headTimeoutMs);
    }

    void handler(HttpHandler handler) {
        this.handler = handler;
    }

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) throws Exception {
        this.ctx = ctx;
        super.handlerAdded(ctx);
    }

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) throws Exception {
        if (failed) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (paused) {
            return; // bytes that were already on their way; they stay cumulated
        }
        int before = in.readerIndex();
        if (!inHead && !inBody) {
            if (handler.owesTooMuch()) {
                pause();
                return;
            }
            int first = in.forEachByte(ByteProcessor.FIND_NON_CRLF); // Netty skips CRLFs before a request line
            if (first >= 0) {
                inHead = true;
                headBytes = before - first;
                contentLengthFields = 0;
                hostFields = 0;
            }
        }
        int emitted = out.size();
        super.decode(ctx, in, out);
        // Workaround: the head's size counted in bytes on the wire, CRLFs included (README, Workarounds)
        if (inHead) {
            headBytes += in.readerIndex() - before;
        }
        for (int i = emitted; i < out.size(); i++) {
            Object m = out.get(i);
            if (m instanceof HttpRequest req) {
                inHead = false;
                inBody = true;
                if (req.decoderResult().isSuccess()) {
                    if (headBytes > MAX_HEAD) {
                        req.setDecoderResult(DecoderResult.failure(new TooLongHttpHeaderException(
                                "request head of " + headBytes + " bytes, over " + MAX_HEAD)));
                    } else if (contentLengthFields > 1) {
                        // Workaround: a second Content-Length in HTTP/1.0 is a 400 (README, Workarounds)
                        // HTTP/1.1 never gets here (Netty rejects it); HTTP/1.0 would be framed by the first one.
                        req.setDecoderResult(DecoderResult.failure(DUPLICATE_CONTENT_LENGTH));
                    } else {
                        // Workaround: Host, target, method and version rules Netty leaves to us (README, Workarounds)
                        RequestValidity.Invalid invalid = RequestValidity.check(req, hostFields);
                        if (invalid != null) req.setDecoderResult(DecoderResult.failure(invalid));
                    }
                }
            }
            if (m instanceof HttpContent c && c.decoderResult().isFailure()
                    || m instanceof HttpMessage msg && msg.decoderResult().isFailure()) {
                failed = true;
            }
            if (m instanceof LastHttpContent) {
                inBody = false;
                timed = false;
            }
        }
        if (failed) {
            in.skipBytes(in.readableBytes());
        } else if (inHead && headBytes > MAX_HEAD) {
            // Complete header lines already over the limit, the empty line not there yet.
            failed = true;
            in.skipBytes(in.readableBytes());
            out.add(refusal(new TooLongHttpHeaderException("request head over " + MAX_HEAD + " bytes")));
        }
    }

    @Override
    protected AsciiString splitHeaderName(byte[] sb, int start, int length) {
        AsciiString name = super.splitHeaderName(sb, start, length);
        if (length == 14 && HttpHeaderNames.CONTENT_LENGTH.contentEqualsIgnoreCase(name)) {
            contentLengthFields++;
        } else if (length == 4 && HttpHeaderNames.HOST.contentEqualsIgnoreCase(name)) {
            hostFields++;
        }
        return name;
    }

    @Override
    protected String splitThirdWordInitialLine(byte[] sb, int start, int length) {
        String version = super.splitThirdWordInitialLine(sb, start, length);
        // Workaround: Netty upper-cases the version before its strict check (README, Workarounds)
        RequestValidity.version(version);
        return version;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) throws Exception {
        super.channelRead(ctx, msg); // cumulates and decodes
        if (paused) {
            // Workaround: an io_uring read in flight completes after setAutoRead(false) (README, Workarounds)
            if (actualReadableBytes() > MAX_PAUSED_BYTES) {
                ctx.close();
            }
        } else if ((inHead || inBody) && !timed && !failed) {
            // Workaround: the head timeout, which Netty's codec has no setting for (README, Workarounds)
            // This read left a request incomplete: from now on it has HEAD_TIMEOUT_MS to complete.
            timed = true;
            startNanos = System.nanoTime();
            if (timer == null) {
                timer = ctx.executor().schedule(this::expire, headTimeoutNanos, TimeUnit.NANOSECONDS);
            }
        }
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
        if (paused) {
            // Workaround: no read requested while paused (README, Workarounds)
            // Not super: ByteToMessageDecoder asks for one more read when autoRead is off and
            // nothing was decoded, and the cumulation would grow while the client does not read.
            discardSomeReadBytes();
            ctx.fireChannelReadComplete();
        } else {
            super.channelReadComplete(ctx);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        failed = true; // what decodeLast would emit for a cut-off request is not answered
        super.channelInactive(ctx);
    }

    private void expire() {
        timer = null;
        if (!timed || failed || !ctx.channel().isActive()) {
            return; // the request completed meanwhile (or the connection is gone)
        }
        long left = startNanos + headTimeoutNanos - System.nanoTime();
        if (left > 0) {
            // armed for an earlier request that completed; this one started later
            timer = ctx.executor().schedule(this::expire, left, TimeUnit.NANOSECONDS);
            return;
        }
        timed = false;
        failed = true;
        Object refusal;
        if (inHead) {
            refusal = refusal(HEAD_TIMEOUT);
        } else {
            LastHttpContent end = new DefaultLastHttpContent(Unpooled.EMPTY_BUFFER);
            end.setDecoderResult(DecoderResult.failure(BODY_TIMEOUT));
            refusal = end;
        }
        ctx.fireChannelRead(refusal);
        ctx.fireChannelReadComplete();
    }

    private HttpMessage refusal(Exception cause) {
        HttpMessage m = createInvalidMessage();
        m.setDecoderResult(DecoderResult.failure(cause));
        return m;
    }

    private void pause() {
        paused = true;
        ctx.channel().config().setAutoRead(false);
    }

    /** Called by the handler whenever answers drain; not from inside a read. */
    void resumeIfDrained() {
        if (!paused || handler.owesTooMuch() || !ctx.channel().isActive()) {
            return;
        }
        paused = false;
        if (actualReadableBytes() > 0) {
            // Workaround: an io_uring read in flight completes after setAutoRead(false) (README, Workarounds)
            try {
                // Decode what is already cumulated first (the client may have sent it all and be
                // waiting). Only if that does not pause again is autoRead turned back on: io_uring
                // submits its receive at once, and a receive in flight completes even after
                // setAutoRead(false), so turning it on first let every pause/resume cycle take in up
                // to one more 64 KB read than it decoded.
                channelRead(ctx, Unpooled.EMPTY_BUFFER);
                channelReadComplete(ctx);
            } catch (Exception e) {
                ctx.fireExceptionCaught(e);
            }
        }
        if (!paused) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    /** Whether decoding is paused because the client does not read its answers. */
    boolean paused() {
        return paused;
    }

    /** A refusal's cause: no stack trace, one instance each. */
    private static final class Refusal extends DecoderException {
        Refusal(String message) {
            super(message);
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }
}
