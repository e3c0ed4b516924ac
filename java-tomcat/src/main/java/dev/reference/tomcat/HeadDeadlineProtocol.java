package dev.reference.tomcat;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.apache.coyote.Processor;
import org.apache.coyote.http11.AbstractHttp11Protocol;
import org.apache.coyote.http11.Http11NioProtocol;
import org.apache.coyote.http11.Http11Processor;
import org.apache.tomcat.util.net.AbstractEndpoint.Handler.SocketState;
import org.apache.tomcat.util.net.SocketWrapperBase;

/**
 * Tomcat's NIO connector, with {@code connectionTimeout} also bounding the whole request head.
 *
 * <p>Stock Tomcat has no limit on the time a request head may take: {@code connectionTimeout} is an
 * inactivity timeout. {@code Http11InputBuffer.parseRequestLine} sets the socket's read timeout to
 * it when the first byte arrives, and {@code NioEndpoint.Poller.timeout} closes a socket only when
 * {@code now - lastRead} exceeds that timeout, so a client that sends one byte every 100 ms keeps a
 * connection (and its processor) forever. Tomcat's connector documentation lists no other timeout
 * for the head.
 *
 * <p>This protocol changes one thing: whenever the processor goes back to waiting for more of an
 * unfinished head ({@code service} returns {@link SocketState#LONG} without async or upgrade), it
 * sets the socket's read timeout to what is left of {@code connectionTimeout} counted from the
 * head's first byte ({@code Request.markStartTime}, which Tomcat takes when that byte is read).
 * Tomcat's own poller then closes the connection at that deadline however slowly the head trickles
 * in, through the same path as a stock read timeout (the connection is closed without an answer).
 * Nothing else is touched: the idle time between requests stays {@code keepAliveTimeout}, and a
 * head that arrives in time is parsed and served by stock Tomcat.
 */
public class HeadDeadlineProtocol extends Http11NioProtocol {

    @Override
    protected Processor createProcessor() {
        return new HeadDeadlineProcessor(this);
    }

    static final class HeadDeadlineProcessor extends Http11Processor {

        private final AbstractHttp11Protocol<?> protocol;

        HeadDeadlineProcessor(AbstractHttp11Protocol<?> protocol) {
            super(protocol, protocol.getAdapter());
            this.protocol = protocol;
        }

        @Override
        public SocketState service(SocketWrapperBase<?> socketWrapper) throws IOException {
            SocketState state = super.service(socketWrapper);
            int headTimeout = protocol.getConnectionTimeout();
            if (state == SocketState.LONG && !isAsync() && !isUpgrade() && headTimeout > 0) {
                // Waiting for the rest of a head whose first byte came at the request's start time.
                long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - request.getStartTimeNanos());
                long left = headTimeout - elapsed;
                if (left <= 0) {
                    return SocketState.CLOSED;
                }
                socketWrapper.setReadTimeout(left);
            }
            return state;
        }
    }
}
