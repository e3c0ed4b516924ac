package javatio;

import org.tio.core.intf.Packet;
import org.tio.http.common.Method;

/** One decoded request: what the router needs, nothing else. */
final class Request extends Packet {
    private static final long serialVersionUID = 1L;
    final Method method;      // null for a method t-io does not know
    final String path;        // raw, without the query
    final String query;       // raw, "" when absent
    final boolean keepAlive;  // false: close after the response
    final boolean http10;     // HTTP/1.0 kept alive answers "Connection: keep-alive"
    final long received = System.nanoTime();

    Request(Method method, String path, String query, boolean keepAlive, boolean http10) {
        this.method = method;
        this.path = path;
        this.query = query == null ? "" : query;
        this.keepAlive = keepAlive;
        this.http10 = http10;
    }
}
