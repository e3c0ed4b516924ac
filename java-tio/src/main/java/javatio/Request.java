package javatio;

import com.litongjava.aio.Packet;

/** One decoded request: what the router needs, nothing else; or a refusal decided while decoding. */
final class Request extends Packet {
    private static final long serialVersionUID = 1L;
    static final int GET = 0, HEAD = 1, OTHER = 2;

    final int method;         // GET, HEAD or OTHER
    final String path;        // raw, without the query
    final String query;       // raw, "" when absent
    final boolean keepAlive;  // false: close after the response
    final boolean http10;     // HTTP/1.0 kept alive answers "Connection: keep-alive"
    /** 0, or the status of a refusal (400, 408, 414, 431, 501, 505): answered, then the connection is closed. */
    final int refusal;
    final long received = System.nanoTime();

    Request(int method, String path, String query, boolean keepAlive, boolean http10) {
        this.method = method;
        this.path = path;
        this.query = query;
        this.keepAlive = keepAlive;
        this.http10 = http10;
        this.refusal = 0;
    }

    private Request(int refusal) {
        this.method = OTHER;
        this.path = "";
        this.query = "";
        this.keepAlive = false;
        this.http10 = false;
        this.refusal = refusal;
    }

    static Request refusal(int status) {
        return new Request(status);
    }

    String methodName() {
        return method == GET ? "GET" : method == HEAD ? "HEAD" : "other";
    }
}
