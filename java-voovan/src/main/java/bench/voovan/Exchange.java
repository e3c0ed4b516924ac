package bench.voovan;

import org.voovan.http.server.HttpRequest;
import org.voovan.http.server.HttpResponse;
import org.voovan.http.server.WebServerHandler;
import org.voovan.http.server.context.WebContext;
import org.voovan.network.IoSession;

import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One request on one connection, and the connection's answer order.
 *
 * Voovan calls the router on the connection's IO thread and, when the router returns, serializes the
 * thread's HttpResponse and writes it. An answer that is not ready yet (/sleep, the backends) detaches
 * with HttpResponse.getAsyncResponse() (Voovan's asynchronous response path): Voovan then writes
 * nothing for it and goes on with the next pipelined request of the same connection at once. Voovan
 * does not keep pipelined answers in order across that path, so each connection carries a queue
 * (Order): while an earlier answer is still outstanding, later ones are parked and written behind it.
 */
final class Exchange {
    private static final String ORDER = "bench.order";

    final IoSession session;
    final HttpResponse resp;
    final boolean head;
    final boolean keepAlive;
    final boolean http10KeepAlive;
    final Order order;

    private Exchange(HttpRequest req, HttpResponse resp) {
        this.session = req.getSocketSession();
        this.resp = resp;
        this.head = "HEAD".equals(req.protocol().getMethod());
        boolean http11 = "1.1".equals(req.protocol().getVersion());
        String connection = req.header().get("Connection");
        if (http11) {
            keepAlive = connection == null || !hasToken(connection, "close");
        } else {
            keepAlive = connection != null && hasToken(connection, "keep-alive");
        }
        this.http10KeepAlive = !http11 && keepAlive;
        Order o = (Order) session.getAttribute(ORDER);
        if (o == null) {
            o = new Order();
            session.setAttribute(ORDER, o);
        }
        this.order = o;
    }

    static Exchange of(HttpRequest req, HttpResponse resp) {
        return new Exchange(req, resp);
    }

    private static boolean hasToken(String header, String token) {
        for (String part : header.split(",")) {
            if (part.trim().equalsIgnoreCase(token)) return true;
        }
        return false;
    }

    /**
     * Voovan's WebServerHandler decides keep-alive only from the HTTP version (it ignores
     * `Connection: close` on HTTP/1.1), and closes after a flush when the connection's state says
     * so. The state is set here, just before this request's answer is written.
     */
    private void applyKeepAlive() {
        WebServerHandler.getAttachment(session).setKeepAlive(keepAlive);
    }

    /** Answer now, on the IO thread (no backend work). */
    void reply(Reply r) {
        if (order.idle()) {
            applyKeepAlive();
            if (head) {
                resp.setAsync(true); // Voovan writes nothing for this response; the bytes below are the answer
                session.send(ByteBuffer.wrap(r.headBytes(http10KeepAlive, WebContext.RESPONSE_COMMON_HEADER)));
            } else {
                fill(resp, r); // Voovan serializes and writes it when the router returns
            }
        } else {
            defer().complete(r); // an earlier answer is outstanding: queue behind it
        }
    }

    /** Answer later, from another thread; Voovan moves on to the connection's next request. */
    Deferred defer() {
        HttpResponse async;
        if (head) {
            resp.setAsync(true);
            async = null;
        } else {
            async = resp.getAsyncResponse();
        }
        return new Deferred(this, async, order.reserve());
    }

    static void fill(HttpResponse r, Reply reply) {
        r.protocol().setStatus(reply.status);
        r.protocol().setStatusCode(reply.reason);
        r.header().put("Content-Type", reply.contentType);
        if (reply.allow) r.header().put("Allow", "GET, HEAD");
        r.write(reply.body);
    }

    /** Runs under the connection's Order lock, in request order. */
    void emit(HttpResponse async, Reply r) {
        try {
            if (!session.isConnected()) return;
            applyKeepAlive();
            if (head) {
                session.send(ByteBuffer.wrap(r.headBytes(http10KeepAlive, WebContext.RESPONSE_COMMON_HEADER)));
                session.flush();
            } else {
                fill(async, r);
                async.send(); // writes to the socket and flushes (an async response flushes itself)
            }
        } catch (Exception e) {
            session.close();
        }
    }

    /** An answer that will come later; the first complete() wins (result, or the deadline's 503). */
    static final class Deferred {
        private final Exchange ex;
        private final HttpResponse async;
        private final Slot slot;
        private final AtomicBoolean done = new AtomicBoolean();

        Deferred(Exchange ex, HttpResponse async, Slot slot) {
            this.ex = ex;
            this.async = async;
            this.slot = slot;
        }

        boolean isDone() {
            return done.get();
        }

        boolean complete(Reply r) {
            if (!done.compareAndSet(false, true)) return false;
            ex.order.finish(slot, () -> ex.emit(async, r));
            return true;
        }
    }

    static final class Slot {
        Runnable emit;
    }

    /** Per connection: answers not yet written, in request order. */
    static final class Order {
        private final ArrayDeque<Slot> pending = new ArrayDeque<>();

        synchronized boolean idle() {
            return pending.isEmpty();
        }

        synchronized Slot reserve() {
            Slot s = new Slot();
            pending.addLast(s);
            return s;
        }

        synchronized void finish(Slot slot, Runnable emit) {
            slot.emit = emit;
            Slot head;
            while ((head = pending.peekFirst()) != null && head.emit != null) {
                pending.pollFirst();
                head.emit.run();
            }
        }
    }
}
