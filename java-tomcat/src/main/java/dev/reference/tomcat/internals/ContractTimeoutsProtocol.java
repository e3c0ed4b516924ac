package dev.reference.tomcat.internals;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.apache.coyote.ErrorState;
import org.apache.coyote.Processor;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.apache.coyote.http11.Http11NioProtocol;
import org.apache.coyote.http11.Http11Processor;
import org.apache.tomcat.util.buf.MessageBytes;
import org.apache.tomcat.util.net.AbstractEndpoint.Handler.SocketState;
import org.apache.tomcat.util.net.SocketWrapperBase;

/**
 * Tomcat's NIO connector with the contract's time limits on a connection, where Tomcat has one
 * setting for several of them. Everything else (parsing, keep-alive, async) is stock.
 *
 * <p><b>The head.</b> Stock Tomcat has no limit on the time a request head may take:
 * {@code connectionTimeout} is an inactivity timeout. {@code Http11InputBuffer.parseRequestLine}
 * sets the socket's read timeout to it when the first byte arrives, and
 * {@code NioEndpoint.Poller.timeout} closes a socket only when {@code now - lastRead} exceeds that
 * timeout, so a client that sends one byte every 100 ms keeps a connection forever. Here, whenever
 * the processor goes back to waiting for more of an unfinished head ({@code service} returns
 * {@link SocketState#LONG} without async or upgrade), the socket's read timeout becomes what is left
 * of {@code connectionTimeout} counted from the head's first byte ({@code Request.markStartTime},
 * which Tomcat takes when that byte is read). Tomcat's own poller then closes the connection at that
 * deadline however slowly the head trickles in, through the path of a stock read timeout (closed
 * without an answer).
 *
 * <p><b>Writes.</b> {@code NioEndpoint.setSocketOptions} also makes {@code connectionTimeout} every
 * HTTP/1.1 socket's write timeout (there is no separate setting), so with a short head limit a
 * client that stops reading its answers for that long is dropped. The contract asks the server to
 * stop reading from such a client (TCP flow control stops it), and allows a kept-alive connection
 * {@code keepAliveTimeout} of silence: a stalled write gets the same.
 *
 * <p><b>Request validity.</b> The contract's rules Tomcat's parser lets through ({@link RequestValidity}:
 * an empty Host, an over-long method, a malformed version) are checked where Tomcat checks the Host,
 * {@code parseHost}, the one overridable step between the parsed head and the adapter; a refusal is
 * Tomcat's own kind ({@code ErrorState.CLOSE_CLEAN}: the Host's error report valve answers, then close).
 */
public class ContractTimeoutsProtocol extends Http11NioProtocol {

    @Override
    protected Processor createProcessor() {
        return new ContractTimeoutsProcessor(this);
    }

    static final class ContractTimeoutsProcessor extends Http11Processor {

        private final AbstractHttp11Protocol<?> protocol;

        ContractTimeoutsProcessor(AbstractHttp11Protocol<?> protocol) {
            super(protocol, protocol.getAdapter());
            this.protocol = protocol;
        }

        @Override
        public SocketState service(SocketWrapperBase<?> socketWrapper) throws IOException {
            // Every request is read through here before anything is written for it.
            // Workaround: keepAliveTimeout as the write timeout, not connectionTimeout (README, Workarounds)
            socketWrapper.setWriteTimeout(protocol.getKeepAliveTimeout());
            SocketState state = super.service(socketWrapper);
            int headTimeout = protocol.getConnectionTimeout();
            long started = request.getStartTimeNanos(); // -1 (Tomcat's "not started") until a first byte
            // Workaround: connectionTimeout bounds the whole head from its first byte (README, Workarounds)
            if (state == SocketState.LONG && !isAsync() && !isUpgrade() && headTimeout > 0 && started != -1) {
                // Waiting for the rest of a head whose first byte came at the request's start time.
                long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                long left = headTimeout - elapsed;
                if (left <= 0) {
                    return SocketState.CLOSED;
                }
                socketWrapper.setReadTimeout(left);
            }
            return state;
        }

        @Override
        protected void parseHost(MessageBytes host) {
            // Called once per request by Http11Processor.prepareRequest, after Tomcat's own checks of the head.
            // Workaround: the request-validity rules Tomcat lets through (README, Workarounds)
            int status = RequestValidity.refusal(request.method(), request.protocol(), host, response.getStatus());
            if (status != 0) {
                response.setStatus(status);
                setErrorState(ErrorState.CLOSE_CLEAN, null);
            }
            super.parseHost(host);
        }
    }
}
