package dev.reference.tomcat.internals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicBoolean;

import org.apache.catalina.Container;
import org.apache.catalina.Context;
import org.apache.catalina.Pipeline;
import org.apache.catalina.Valve;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.apache.coyote.ActionCode;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.apache.tomcat.util.buf.CharsetHolder;
import org.apache.tomcat.util.buf.MessageBytes;
import org.apache.tomcat.util.res.StringManager;
import org.springframework.http.HttpStatus;

import dev.reference.tomcat.Replies;

/**
 * The Host's error report valve (Tomcat's {@code errorReportValveClass}, in place of the stock
 * {@link ErrorReportValve}): it writes the answer to every request that Tomcat refuses before any
 * application code runs (a malformed head, a bad Content-Length, a head over
 * {@code maxHttpRequestHeaderSize}, ...). Tomcat routes those to the Host with no Context, so
 * neither Spring MVC nor the {@code /error} page sees them; the stock valve would answer with an
 * HTML page.
 *
 * <p>This one answers the contract's way: the status's reason phrase as a
 * {@code text/plain; charset=utf-8} body, and {@code Connection: close} (Tomcat closes the connection
 * after every such refusal anyway, its error state is {@code CLOSE_CLEAN}).
 *
 * <p>One status is corrected. Tomcat answers a head larger than {@code maxHttpRequestHeaderSize}
 * with 400 whatever part of it is too long ({@code Http11InputBuffer.fill} and {@code parseHeaders}
 * throw the same {@code IllegalArgumentException("Request header is too large")}; no 414 or 431
 * exists in Tomcat's HTTP/1.1 code). RFC 9110 §15.5.15 and RFC 6585 §5 name the precise answers, and
 * so does the contract: 414 when the request line alone is over the limit, 431 otherwise.
 */
public class RefusalReportValve extends ErrorReportValve {

    /** The message Tomcat's head parser throws when the head outgrows its buffer (same StringManager, same locale). */
    private static final String HEAD_TOO_LARGE = StringManager.getManager(AbstractHttp11Protocol.class)
            .getString("iib.requestheadertoolarge.error");

    public RefusalReportValve() {
        setShowReport(false);
        setShowServerInfo(false);
    }

    /**
     * Puts this valve in place of the stock one on the Host of {@code context}. Spring Boot adds a
     * stock ErrorReportValve to the Host (server.error.include-stacktrace=never); it is replaced, and
     * the Host is told the class so that it does not add another one when it starts.
     */
    public static void install(Context context) {
        // Workaround: the Host's error report valve replaced by RefusalReportValve (README, Workarounds)
        Container host = context.getParent();
        Pipeline pipeline = host.getPipeline();
        for (Valve valve : pipeline.getValves()) {
            if (valve instanceof ErrorReportValve) {
                pipeline.removeValve(valve);
            }
        }
        pipeline.addValve(new RefusalReportValve());
        if (host instanceof StandardHost standardHost) {
            standardHost.setErrorReportValveClass(RefusalReportValve.class.getName());
        }
    }

    @Override
    protected void report(Request request, Response response, Throwable throwable) {
        int status = response.getStatus();
        // The same conditions as the stock valve: an error status, nothing written yet, not yet reported.
        if (status < 400 || response.getContentWritten() > 0 || !response.setErrorReported()) {
            return;
        }
        AtomicBoolean ioAllowed = new AtomicBoolean(false);
        response.getCoyoteResponse().action(ActionCode.IS_IO_ALLOWED, ioAllowed);
        if (!ioAllowed.get()) {
            return;
        }
        // Workaround: 414/431 where Tomcat answers an oversized head 400 (README, Workarounds)
        if (status == 400 && throwable instanceof IllegalArgumentException && HEAD_TOO_LARGE.equals(throwable.getMessage())) {
            status = requestLineLength(request) > maxHeadSize(request) ? 414 : 431;
        }
        HttpStatus known = HttpStatus.resolve(status);
        byte[] body = (known != null ? known.getReasonPhrase() : "Error").getBytes(StandardCharsets.US_ASCII);
        try {
            response.setStatus(status);
            response.setHeader("Connection", "close");
            org.apache.coyote.Response coyote = response.getCoyoteResponse();
            coyote.setCharsetHolder(CharsetHolder.EMPTY);
            coyote.setContentTypeNoCharset(Replies.TEXT); // printed verbatim, as in ContentTypeValve
            response.getOutputStream().write(body);
            response.finishResponse();
        } catch (IOException | IllegalStateException e) {
            // The client went away, or the response was taken over by the time we got here: nothing to report to.
        }
    }

    /**
     * The request line's length as far as Tomcat parsed it: method SP target SP protocol. A target
     * Tomcat never finished reading (the limit was hit inside the request line) counts as too long.
     */
    private static long requestLineLength(Request request) {
        org.apache.coyote.Request coyote = request.getCoyoteRequest();
        MessageBytes uri = coyote.requestURI();
        if (uri.isNull()) {
            return Long.MAX_VALUE;
        }
        MessageBytes query = coyote.queryString();
        String method = coyote.getMethod();
        return (method == null ? 0 : method.length()) + 1 + uri.getLength()
                + (query.isNull() ? 0 : 1 + query.getLength()) + 1 + coyote.protocol().getLength();
    }

    private static int maxHeadSize(Request request) {
        return request.getConnector().getProtocolHandler() instanceof AbstractHttp11Protocol<?> http11
                ? http11.getMaxHttpRequestHeaderSize() : 8192;
    }
}
