package javatio;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.function.IntConsumer;

/**
 * The stack's HTTP/1.1 request parser: request line and header fields, with the contract's limits and
 * framing rules; bytes in, a Request (or a refusal) out. t-io calls it through HttpHandler.decode.
 */
final class HttpParser {
    private HttpParser() {}

    /** Longest request line (without its CRLF) served; longer: 414. */
    static final int MAX_LINE = 8192;
    /** Longest head (request line + header lines + empty line, CRLFs included) served; longer: 431. */
    static final int MAX_HEAD = 16384;
    /** Longest request body read (and discarded); a longer one is left unread and the connection closed. */
    static final int MAX_BODY = 64 * 1024;

    /** RFC 9110 tchar: the bytes allowed in a method and a field name. */
    private static final boolean[] TCHAR = new boolean[256];

    static {
        for (char ch = '0'; ch <= '9'; ch++) TCHAR[ch] = true;
        for (char ch = 'a'; ch <= 'z'; ch++) TCHAR[ch] = true;
        for (char ch = 'A'; ch <= 'Z'; ch++) TCHAR[ch] = true;
        for (char ch : "!#$%&'*+-.^_`|~".toCharArray()) TCHAR[ch] = true;
    }

    private static final byte[] CONTENT_LENGTH = "content-length".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] TRANSFER_ENCODING = "transfer-encoding".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONNECTION = "connection".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] HOST = "host".getBytes(StandardCharsets.US_ASCII);

    private static Request refuse(ByteBuffer b, int limit, int status) {
        b.position(limit);
        return Request.refusal(status);
    }

    /**
     * One request from {@code b} between {@code p} and {@code limit}: the Request (b's position moved past
     * it, its body included), a Request carrying a refusal's status (b's position at the limit), or null
     * while incomplete (b untouched; when the head is complete and the body is not, {@code need} gets the
     * bytes the whole request takes).
     */
    static Request parse(ByteBuffer b, int p, int limit, IntConsumer need) {
        // request line: METHOD SP request-target SP HTTP-version
        int lf = indexOfLf(b, p, Math.min(limit, p + MAX_LINE + 2));
        if (lf < 0) {
            return limit - p >= MAX_LINE + 2 ? refuse(b, limit, 414) : null;
        }
        int eol = lf > p && b.get(lf - 1) == '\r' ? lf - 1 : lf;
        if (eol - p > MAX_LINE) {
            return refuse(b, limit, 414);
        }
        int sp1 = p;
        while (sp1 < eol && TCHAR[b.get(sp1) & 0xff]) {
            sp1++;
        }
        int sp2 = sp1 + 1;
        while (sp2 < eol && (b.get(sp2) & 0xff) > 0x20 && b.get(sp2) != 0x7f) {
            sp2++;
        }
        // HTTP-version is "HTTP/" DIGIT "." DIGIT (RFC 9112 2.3): anything else 400, another major 505
        if (sp1 == p || sp1 >= eol || b.get(sp1) != ' ' || sp2 == sp1 + 1 || sp2 >= eol || b.get(sp2) != ' '
                || eol - sp2 - 1 != 8 || !startsWith(b, sp2 + 1, "HTTP/") || !digit(b.get(sp2 + 6))
                || b.get(sp2 + 7) != '.' || !digit(b.get(eol - 1))) {
            return refuse(b, limit, 400);
        }
        if (b.get(sp2 + 6) != '1') {
            return refuse(b, limit, 505); // RFC 9110 15.6.6
        }
        boolean http10 = b.get(eol - 1) == '0';
        int status = RequestValidity.method(b, p, sp1);
        if (status != 0) {
            return refuse(b, limit, status);
        }
        // where the path starts: after the authority of an absolute-form target
        int path = RequestValidity.target(b, sp1 + 1, sp2, sp1 - p == 7 && startsWith(b, p, "OPTIONS"));
        if (path < 0) {
            return refuse(b, limit, 400);
        }

        // header fields
        long contentLength = -1;
        boolean chunked = false, close = false, keepAlive = false;
        int hosts = 0;
        int line = lf + 1;
        int end;
        while (true) {
            int nl = indexOfLf(b, line, Math.min(limit, p + MAX_HEAD));
            if (nl < 0) {
                return limit - p >= MAX_HEAD ? refuse(b, limit, 431) : null;
            }
            int e = nl > line && b.get(nl - 1) == '\r' ? nl - 1 : nl;
            if (e == line) {
                end = nl + 1; // the empty line: end of the head
                break;
            }
            // field-name ":" OWS field-value OWS; the name is tchar only: no whitespace before the colon,
            // no space, tab, control or other delimiter in it (a line starting with whitespace, the
            // obsolete line folding, is refused the same way)
            int colon = line;
            while (colon < e && TCHAR[b.get(colon) & 0xff]) {
                colon++;
            }
            if (colon == line || colon == e || b.get(colon) != ':') {
                return refuse(b, limit, 400);
            }
            int vs = colon + 1, ve = e;
            for (int i = vs; i < ve; i++) {
                byte v = b.get(i);
                if (v == '\r' || v == 0) {
                    return refuse(b, limit, 400); // RFC 9110 5.5: CR and NUL are never part of a value
                }
            }
            while (vs < ve && (b.get(vs) == ' ' || b.get(vs) == '\t')) {
                vs++;
            }
            while (ve > vs && (b.get(ve - 1) == ' ' || b.get(ve - 1) == '\t')) {
                ve--;
            }
            if (nameIs(b, line, colon, CONTENT_LENGTH)) {
                long n = contentLength(b, vs, ve);
                if (n < 0 || (contentLength >= 0 && n != contentLength)) {
                    return refuse(b, limit, 400); // not a number, or two different lengths
                }
                contentLength = n;
            } else if (nameIs(b, line, colon, TRANSFER_ENCODING)) {
                chunked = true; // any transfer coding: the body is not read, the connection closes
            } else if (nameIs(b, line, colon, HOST)) {
                if (++hosts > 1 || !RequestValidity.host(b, vs, ve)) {
                    return refuse(b, limit, 400); // RFC 9112 3.2: one Host, uri-host [":" port]
                }
            } else if (nameIs(b, line, colon, CONNECTION)) {
                String v = ascii(b, vs, ve);
                close |= hasToken(v, "close");
                keepAlive |= hasToken(v, "keep-alive");
            }
            line = nl + 1;
        }
        if (hosts == 0 && !http10) {
            return refuse(b, limit, 400); // RFC 9112 3.2: HTTP/1.1 requires Host
        }
        if (chunked && contentLength >= 0) {
            return refuse(b, limit, 400); // RFC 9112 6.3: Transfer-Encoding with Content-Length
        }

        // body: read and discarded up to MAX_BODY; otherwise answered, then the connection is closed
        boolean unreadBody = chunked || contentLength > MAX_BODY;
        if (contentLength > 0 && !unreadBody) {
            if (limit - end < contentLength) {
                need.accept((int) (end - p + contentLength));
                return null;
            }
            end += (int) contentLength;
        }
        b.position(unreadBody ? limit : end);

        int method = sp1 - p == 3 && startsWith(b, p, "GET") ? Request.GET
                : sp1 - p == 4 && startsWith(b, p, "HEAD") ? Request.HEAD : Request.OTHER;
        String target = ascii(b, path, sp2);
        if (path != sp1 + 1 && (target.isEmpty() || target.charAt(0) == '?')) {
            target = "/" + target; // absolute-form with an empty path (RFC 9112 3.2.2)
        }
        int q = target.indexOf('?');
        boolean persistent = !unreadBody && (http10 ? keepAlive && !close : !close);
        return new Request(method, q < 0 ? target : target.substring(0, q), q < 0 ? "" : target.substring(q + 1),
                persistent, http10);
    }

    private static int indexOfLf(ByteBuffer b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b.get(i) == '\n') {
                return i;
            }
        }
        return -1;
    }

    private static boolean digit(byte c) {
        return c >= '0' && c <= '9';
    }

    static boolean startsWith(ByteBuffer b, int at, String s) {
        for (int i = 0; i < s.length(); i++) {
            if (b.get(at + i) != s.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    /** Case-insensitive name match; lowerName is lower case. */
    private static boolean nameIs(ByteBuffer b, int from, int to, byte[] lowerName) {
        if (to - from != lowerName.length) {
            return false;
        }
        for (int i = 0; i < lowerName.length; i++) {
            if ((b.get(from + i) | 0x20) != lowerName[i]) {
                return false;
            }
        }
        return true;
    }

    /**
     * A Content-Length value: 1*DIGIT, or a list of identical ones ("5, 5", RFC 9112 6.3); -1 when invalid
     * ("abc", "-1", "1.5", "", "5, 6"). Values beyond 18 digits count as Long.MAX_VALUE (too long anyway).
     */
    private static long contentLength(ByteBuffer b, int from, int to) {
        long result = -1;
        int i = from;
        while (true) {
            long n = 0;
            int digits = 0;
            while (i < to && b.get(i) >= '0' && b.get(i) <= '9') {
                n = digits < 18 ? n * 10 + (b.get(i) - '0') : Long.MAX_VALUE;
                digits++;
                i++;
            }
            if (digits == 0 || (result >= 0 && n != result)) {
                return -1;
            }
            result = n;
            while (i < to && (b.get(i) == ' ' || b.get(i) == '\t')) {
                i++;
            }
            if (i == to) {
                return result;
            }
            if (b.get(i) != ',') {
                return -1;
            }
            i++;
            while (i < to && (b.get(i) == ' ' || b.get(i) == '\t')) {
                i++;
            }
        }
    }

    static String ascii(ByteBuffer b, int from, int to) {
        byte[] bytes = new byte[to - from];
        b.get(from, bytes);
        return new String(bytes, StandardCharsets.ISO_8859_1);
    }

    private static boolean hasToken(String header, String token) {
        for (String part : header.split(",")) {
            if (part.trim().equalsIgnoreCase(token)) {
                return true;
            }
        }
        return false;
    }
}
