package bench.voovan.workaround;

import bench.voovan.Reply;
import org.voovan.network.IoFilter;
import org.voovan.network.IoSession;
import org.voovan.tools.buffer.ByteBufferChannel;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;

/**
 * The first IoFilter of every connection, in front of Voovan's HTTP decoder (WebServerFilter), which
 * parses straight from the connection's read buffer. It hands Voovan only a request head that is
 * complete, within the contract's sizes and well-framed, and never a body (README, "Protocol hygiene", "Workarounds"),
 * because Voovan's parser (HttpParser, 4.3.8):
 * - waits for missing bytes of a head or body on the IO thread, in a nested select loop, for up to
 *   ReadTimeout per line (every other connection of that thread waits too), then drops the bytes it
 *   has and answers nothing;
 * - copies each token of the head into a per-thread 1,024-byte array (a longer one is an
 *   ArrayIndexOutOfBoundsException, answered 500; Workarounds widens the array instead);
 * - takes a field name to end at ": ", so "Name:value" or an empty value ends the head early, and the
 *   rest of the head is parsed as the next request; keeps the last of repeated fields; accepts any byte
 *   in a name; reads a body only for a non-GET request with a Content-Type, and otherwise parses the
 *   body as the next request.
 *
 * The request line and Host are checked by RequestValidity (400, 501, 505). Refusals (those and 400,
 * 414, 431 here) are written through the connection's answer order, then the connection ends.
 * A request with a body (Content-Length above 0, or Transfer-Encoding) is served without its body and
 * ends the connection: its framing fields are removed from the head Voovan sees, "Connection: close" is
 * added, and everything after the head is dropped. A head that needs no change is passed as it is.
 */
final class HeadGuard implements IoFilter {
    static final int MAX_LINE = 8192;   // a longer request line is 414
    static final int MAX_HEAD = 16384;  // a longer head is 431 (heads up to this size are served)

    private static final byte CR = '\r', LF = '\n', SP = ' ', HTAB = '\t';
    private static final boolean[] TCHAR = new boolean[256];

    static {
        for (char c = '0'; c <= '9'; c++) TCHAR[c] = true;
        for (char c = 'a'; c <= 'z'; c++) TCHAR[c] = true;
        for (char c = 'A'; c <= 'Z'; c++) TCHAR[c] = true;
        for (char c : "!#$%&'*+-.^_`|~".toCharArray()) TCHAR[c] = true;
    }

    static final int INCOMPLETE = 0, PASS = 1;

    @Override
    public Object decode(IoSession session, Object object) {
        Conn c = Conn.of(session);
        if (c == null) return object;
        ByteBufferChannel in = session.getReadByteBufferChannel();
        c.lastActive = System.nanoTime();
        if (c.discard) {
            in.clear();
            c.stash = null;
            c.stashLen = 0;
            c.flush();
            return null;
        }
        c.unstash(in);
        if (c.outPending) { // answers are not being read: hold the input back (reading is paused too)
            c.stashAll(in);
            c.flush();
            return null;
        }
        Head h = new Head();
        int verdict;
        ByteBuffer bb = in.getByteBuffer();
        try {
            verdict = bb == null ? INCOMPLETE : inspect(bb, in.size(), h);
        } finally {
            in.compact(); // nothing consumed: only releases getByteBuffer()'s lock
        }
        // Workaround: Voovan's parser waits on the IO thread for a head's missing bytes (README, Workarounds)
        if (verdict == INCOMPLETE) {
            if (h.start < 0) { // nothing but empty lines (RFC 9112 §2.2 allows them before a request)
                in.clear();
            } else {
                if (c.headStart == 0) c.headStart = System.nanoTime();
                c.stashAll(in);
            }
            c.flush();
            return null;
        }
        if (verdict != PASS) {
            in.clear();
            c.headStart = 0;
            c.refuse(switch (verdict) {
                case 414 -> Reply.URI_TOO_LONG;
                case 431 -> Reply.HEADERS_TOO_LARGE;
                case 501 -> Reply.NOT_IMPLEMENTED;
                case 505 -> Reply.VERSION_NOT_SUPPORTED;
                default -> Reply.BAD_REQUEST;
            });
            return null;
        }
        c.headStart = 0;
        c.reqHttp11 = h.http11;  // read by the Exchange of this request (Voovan dispatches it before the next decode)
        c.reqCloses = h.closes;
        if (h.closes) c.discard = true; // nothing after this request is read as a request
        // Workaround: a body Voovan would wait for or parse as the next request (README, Workarounds)
        if (h.body || h.rewrite) {
            byte[] head = rewrite(in, h);
            if (h.body) {
                in.clear(); // the body (and anything after it) is dropped
                in.writeEnd(head, 0, head.length);
            } else {
                int rest = in.size() - h.end;
                byte[] tail = new byte[rest];
                if (rest > 0) in.get(tail, h.end, rest);
                in.clear();
                in.writeEnd(head, 0, head.length);
                if (rest > 0) in.writeEnd(tail, 0, rest);
            }
        }
        return object; // Voovan's WebServerFilter parses the head from the read buffer
    }

    @Override
    public Object encode(IoSession session, Object object) {
        return object;
    }

    /** What inspect() learned about the head at the front of the buffer. */
    static final class Head {
        int start = -1;       // first byte of the request line (after empty lines)
        int lineEnd;          // index of the request line's CR
        int end;              // one past the head's empty line
        int path = -1;        // absolute-form: where its origin-form begins in the request line (to pathEnd)
        int pathEnd;
        boolean http11, get;
        boolean rewrite;      // a field Voovan would misparse ("Name:value", an empty value), a Content-Type on a non-GET, AUTH-TOKEN
        boolean body;         // Content-Length above 0, or Transfer-Encoding
        boolean closes;       // the connection ends after this request
    }

    /** INCOMPLETE, PASS, or the refusal status (400, 414, 431, 501, 505) for the head at the front of {@code b}. */
    static int inspect(ByteBuffer b, int n, Head h) {
        int p = 0;
        while (p < n && (b.get(p) == CR || b.get(p) == LF)) p++;
        if (p == n) return INCOMPLETE;
        h.start = p;
        // request line: METHOD SP target SP HTTP-version CRLF, within MAX_LINE
        int lf = indexOfLf(b, p, Math.min(n, p + MAX_LINE + 2));
        if (lf < 0) return n - p > MAX_LINE + 1 ? 414 : INCOMPLETE;
        if (lf - p - 1 > MAX_LINE) return 414;
        if (lf == p || b.get(lf - 1) != CR) return 400;
        int cr = lf - 1;
        h.lineEnd = cr;
        // Workaround: Voovan validates no request line (README, Workarounds)
        int refusal = RequestValidity.requestLine(b, p, cr, h);
        if (refusal != 0) return refusal;
        if (h.path >= 0) h.rewrite = true; // absolute-form: Voovan sees its origin-form
        // field lines
        long contentLength = -1;
        boolean te = false, contentType = false, close = false, keepAlive = false;
        int hosts = 0, hostFrom = 0, hostTo = 0;
        int pos = lf + 1;
        while (true) {
            int limit = Math.min(n, p + MAX_HEAD);
            lf = indexOfLf(b, pos, limit);
            if (lf < 0) return n - p >= MAX_HEAD ? 431 : INCOMPLETE;
            if (lf == pos || b.get(lf - 1) != CR) return 400; // a bare LF
            cr = lf - 1;
            if (cr == pos) { // the empty line: end of the head
                h.end = lf + 1;
                break;
            }
            int nameEnd = pos;
            while (nameEnd < cr && TCHAR[b.get(nameEnd) & 0xff]) nameEnd++;
            // an empty name (also a line folded with leading whitespace), whitespace before the colon,
            // a space, tab, control or other non-token byte in the name, or no colon at all
            if (nameEnd == pos || nameEnd == cr || b.get(nameEnd) != ':') return 400;
            for (int v = nameEnd + 1; v < cr; v++) {
                int x = b.get(v) & 0xff;
                if ((x < 0x20 && x != HTAB) || x == 0x7f) return 400;
            }
            // Workaround: Voovan ends a name only at ": " (README, Workarounds)
            if (nameEnd + 1 == cr || b.get(nameEnd + 1) != SP) h.rewrite = true;
            int len = nameEnd - pos;
            if (len == 14 && nameIs(b, pos, "content-length")) {
                long value = digits(b, nameEnd + 1, cr);
                if (value < 0) return 400;
                if (contentLength >= 0 && contentLength != value) return 400;
                contentLength = value;
            } else if (len == 17 && nameIs(b, pos, "transfer-encoding")) {
                te = true;
            } else if (len == 12 && nameIs(b, pos, "content-type")) {
                contentType = true;
            } else if (len == 10 && nameIs(b, pos, "connection")) {
                close |= hasToken(b, nameEnd + 1, cr, "close");
                keepAlive |= hasToken(b, nameEnd + 1, cr, "keep-alive");
            } else if (len == 4 && nameIs(b, pos, "host")) {
                hosts++;
                hostFrom = nameEnd + 1;
                hostTo = cr;
            } else if (len == 10 && nameIs(b, pos, "auth-token")) {
                h.rewrite = true; // Workaround: ADMIN/MONITOR with AUTH-TOKEN skip every HttpFilter (README, Workarounds)
            }
            pos = lf + 1;
        }
        if (te && contentLength >= 0) return 400; // RFC 9112 §6.3: a request smuggling shape
        // Workaround: Voovan keeps the last of several Host fields and checks none (README, Workarounds)
        if (RequestValidity.host(hosts, h.http11, b, hostFrom, hostTo) != 0) return 400;
        h.body = te || contentLength > 0;
        // Workaround: Voovan keeps an HTTP/1.1 connection open after "Connection: close" (README, Workarounds)
        h.closes = h.body || (h.http11 ? close : !keepAlive);
        if (contentType && !h.get) h.rewrite = true; // Voovan would try to read a body (multipart: wait for one)
        return PASS;
    }

    /**
     * The head as Voovan's parser reads it: the request line, each field as "Name: value", without
     * Content-Type on a non-GET, without AUTH-TOKEN, without the framing fields of a body and with
     * "Connection: close" when there is one.
     */
    static byte[] rewrite(ByteBufferChannel in, Head h) {
        byte[] raw = new byte[h.end];
        in.get(raw, 0, h.end);
        ByteArrayOutputStream out = new ByteArrayOutputStream(h.end + 32);
        if (h.path < 0) {
            out.write(raw, h.start, h.lineEnd - h.start + 2);
        } else { // absolute-form as its origin-form: "http://a/b?c" as "/b?c", "http://a" as "/"
            int target = h.start;
            while (raw[target] != SP) target++;
            out.write(raw, h.start, target + 1 - h.start);
            if (h.path == h.pathEnd || raw[h.path] != '/') out.write('/');
            out.write(raw, h.path, h.lineEnd + 2 - h.path);
        }
        for (int from = h.lineEnd + 2, cr; from < h.end - 2; from = cr + 2) {
            cr = from;
            while (raw[cr] != CR) cr++;
            int colon = from;
            while (raw[colon] != ':') colon++;
            String name = new String(raw, from, colon - from, java.nio.charset.StandardCharsets.US_ASCII);
            if (name.equalsIgnoreCase("content-type") && !h.get) continue;
            if (name.equalsIgnoreCase("auth-token")) continue; // Voovan's admin token: never seen by Voovan
            if (h.body && (name.equalsIgnoreCase("content-length") || name.equalsIgnoreCase("transfer-encoding")
                    || name.equalsIgnoreCase("content-type") || name.equalsIgnoreCase("connection"))) continue;
            int v = colon + 1;
            while (v < cr && (raw[v] == SP || raw[v] == HTAB)) v++;
            int e = cr;
            while (e > v && (raw[e - 1] == SP || raw[e - 1] == HTAB)) e--;
            out.write(raw, from, colon - from);
            out.write(':');
            out.write(' ');
            out.write(raw, v, e - v);
            out.write(CR);
            out.write(LF);
        }
        if (h.body) out.writeBytes("Connection: close\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        out.write(CR);
        out.write(LF);
        return out.toByteArray();
    }

    private static int indexOfLf(ByteBuffer b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b.get(i) == LF) return i;
        }
        return -1;
    }

    private static boolean nameIs(ByteBuffer b, int from, String lower) {
        for (int k = 0; k < lower.length(); k++) {
            int x = b.get(from + k);
            if (x >= 'A' && x <= 'Z') x += 32;
            if (x != lower.charAt(k)) return false;
        }
        return true;
    }

    /** A Content-Length value: 1*DIGIT between optional whitespace; -1 if it is not that. Saturates. */
    private static long digits(ByteBuffer b, int from, int to) {
        while (from < to && (b.get(from) == SP || b.get(from) == HTAB)) from++;
        while (to > from && (b.get(to - 1) == SP || b.get(to - 1) == HTAB)) to--;
        if (from == to) return -1;
        long v = 0;
        for (int k = from; k < to; k++) {
            int d = b.get(k) - '0';
            if (d < 0 || d > 9) return -1;
            v = v > Long.MAX_VALUE / 20 ? v : v * 10 + d;
        }
        return v;
    }

    /** Whether the comma-separated list in [from, to) holds {@code token} (case-insensitive). */
    private static boolean hasToken(ByteBuffer b, int from, int to, String token) {
        int k = from;
        while (k < to) {
            while (k < to && (b.get(k) == SP || b.get(k) == HTAB || b.get(k) == ',')) k++;
            int s = k;
            while (k < to && b.get(k) != ',') k++;
            int e = k;
            while (e > s && (b.get(e - 1) == SP || b.get(e - 1) == HTAB)) e--;
            if (e - s == token.length()) {
                boolean same = true;
                for (int j = 0; j < e - s && same; j++) {
                    int x = b.get(s + j);
                    if (x >= 'A' && x <= 'Z') x += 32;
                    same = x == token.charAt(j);
                }
                if (same) return true;
            }
        }
        return false;
    }
}
