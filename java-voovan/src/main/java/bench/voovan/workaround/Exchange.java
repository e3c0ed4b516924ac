package bench.voovan.workaround;

import bench.voovan.Reply;
import org.voovan.http.server.HttpRequest;
import org.voovan.http.server.HttpResponse;
import org.voovan.http.server.context.WebContext;
import org.voovan.network.IoSession;

import java.io.IOException;
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
public final class Exchange {
    final Conn conn;
    final IoSession session;
    final HttpResponse resp;
    final boolean head;
    final boolean keepAlive;
    final boolean http10KeepAlive;
    final Order order;

    private Exchange(HttpRequest req, HttpResponse resp) {
        this.session = req.getSocketSession();
        this.conn = Conn.of(session);
        this.resp = resp;
        this.head = "HEAD".equals(req.protocol().getMethod());
        // HeadGuard read this request's head just before Voovan parsed it: version, Connection, body
        this.keepAlive = !conn.reqCloses;
        this.http10KeepAlive = !conn.reqHttp11 && keepAlive;
        this.order = conn.order;
    }

    public static Exchange of(HttpRequest req, HttpResponse resp) {
        return new Exchange(req, resp);
    }

    /** Answer now, on the IO thread (no backend work). */
    public void reply(Reply r) {
        if (order.idle()) {
            resp.setAsync(true); // Voovan writes nothing for this response: it is written here
            if (head) { // Workaround: Voovan derives a HEAD's Content-Length from its body (README, Workarounds)
                conn.answer(() -> session.send(ByteBuffer.wrap(r.headBytes(http10KeepAlive, keepAlive,
                        WebContext.RESPONSE_COMMON_HEADER))), !keepAlive);
            } else {
                conn.answer(() -> send(resp, r), !keepAlive);
            }
        } else {
            defer().complete(r); // an earlier answer is outstanding: queue behind it
        }
    }

    /** Answer later, from another thread; Voovan moves on to the connection's next request. */
    public Deferred defer() {
        HttpResponse async;
        if (head) {
            resp.setAsync(true);
            async = null;
        } else {
            async = resp.getAsyncResponse();
        }
        return new Deferred(this, async, order.reserve());
    }

    /**
     * Voovan's HttpResponse serializes the answer (status line, Content-Type, Content-Length, its
     * cached Date and Server) into the connection's send buffer; Conn writes it out.
     */
    private void send(HttpResponse r, Reply reply) {
        r.protocol().setStatus(reply.status);
        r.protocol().setStatusCode(reply.reason);
        r.header().put("Content-Type", reply.contentType);
        if (reply.allow) r.header().put("Allow", "GET, HEAD");
        if (!keepAlive) r.header().put("Connection", "close");
        r.write(reply.body);
        r.setAsync(false); // an async response would flush itself with Voovan's blocking write
        try {
            r.send();
        } catch (IOException e) {
            session.close();
        }
        r.setAsync(true); // the thread's own response: Voovan's encoder must not write it again
    }

    /** Runs under the connection's Order lock, in request order. */
    void emit(HttpResponse async, Reply r) {
        if (head) {
            conn.answer(() -> session.send(ByteBuffer.wrap(r.headBytes(http10KeepAlive, keepAlive,
                    WebContext.RESPONSE_COMMON_HEADER))), !keepAlive);
        } else {
            conn.answer(() -> send(async, r), !keepAlive);
        }
    }

    /** An answer that will come later; the first complete() is written, any later one dropped. */
    public static final class Deferred {
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

        public boolean complete(Reply r) {
            if (!done.compareAndSet(false, true)) return false;
            ex.order.finish(slot, () -> ex.emit(async, r));
            return true;
        }
    }

    static final class Slot {
        Runnable emit;
    }

    /** Per connection: answers not yet written, in request order. */
    // Workaround: Voovan does not order answers across getAsyncResponse() (README, Workarounds)
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
