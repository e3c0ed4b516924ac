package bench.voovan.workaround;

import java.nio.ByteBuffer;

/**
 * Request validity (RFC 9112 §3, RFC 9110 §4.2, §7.2) on the raw head, for HeadGuard: the request line
 * (method, target form and bytes, version) and the Host field. Voovan's parser checks none of it: it
 * takes any bytes as method and path, reads a version from its 8th byte alone, and keeps the last of
 * repeated fields (README, Workarounds). Each check answers 0 (valid) or the refusal's status.
 */
final class RequestValidity {
    static final int MAX_METHOD = 32; // a longer method token is 501 (RFC 9112 §3)

    private static final boolean[] TCHAR = new boolean[256], TARGET = new boolean[256], REG_NAME = new boolean[256];

    static {
        String alnum = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        for (char c : (alnum + "!#$%&'*+-.^_`|~").toCharArray()) TCHAR[c] = true;
        // RFC 3986: unreserved, sub-delims but ',' (a list is no host), and '%' of pct-encoded
        for (char c : (alnum + "-._~!$&'()*+;=%").toCharArray()) REG_NAME[c] = true;
        // origin-form's path and query (RFC 3986 pchar, '/', '?'): unreserved, sub-delims, ':', '@', '%'
        for (char c : (alnum + "-._~!$&'()*+,;=:@/?%").toCharArray()) TARGET[c] = true;
    }

    /**
     * The request line [p, cr): METHOD SP request-target SP HTTP-version. On 0 it sets h.get, h.http11
     * and, for absolute-form, h.path (where the origin-form begins in the target) and h.pathEnd.
     */
    static int requestLine(ByteBuffer b, int p, int cr, HeadGuard.Head h) {
        int i = p;
        while (i < cr && TCHAR[b.get(i) & 0xff]) i++;
        if (i == p || i >= cr || b.get(i) != ' ') return 400;
        int method = i - p;
        if (method > MAX_METHOD || method == 7 && is(b, p, "CONNECT")) return 501;
        h.get = method == 3 && is(b, p, "GET");
        int t = ++i;
        boolean rfc3986 = true; // every byte one that RFC 3986 allows in a path and query
        for (byte x; i < cr && (x = b.get(i)) != ' '; i++) rfc3986 &= TARGET[x & 0xff];
        if (i == t || i >= cr) return 400;
        int te = i++;
        // version: "HTTP/" DIGIT "." DIGIT (RFC 9112 §2.3); another major is 505; HTTP/1.0 and 1.1 only
        if (cr - i != 8 || !is(b, i, "HTTP/") || b.get(i + 6) != '.' || !digit(b.get(i + 5)) || !digit(b.get(i + 7))) return 400;
        if (b.get(i + 5) != '1') return 505;
        byte minor = b.get(i + 7);
        if (minor != '0' && minor != '1') return 400;
        h.http11 = minor == '1';
        h.path = -1;
        byte first = b.get(t);
        if (first == '/') return rfc3986 ? 0 : 400;                                     // origin-form
        if (first == '*') return te - t == 1 && method == 7 && is(b, p, "OPTIONS") ? 0 : 400; // asterisk-form
        // absolute-form (RFC 9112 §3.2.2), served as its path; anything else (authority-form) is 400
        int a = scheme(b, t, te);
        if (a < 0) return 400;
        int end = a;
        while (end < te && b.get(end) != '/' && b.get(end) != '?') end++;
        if (!host(b, a, end)) return 400;
        h.path = end;
        h.pathEnd = te;
        return bytes(b, end, te);
    }

    /**
     * The Host fields: HTTP/1.1 needs exactly one, HTTP/1.0 at most one (RFC 9112 §3.2); its value
     * [from, to), without the OWS around it, is uri-host [":" port] with a host that is not empty.
     */
    static int host(int count, boolean http11, ByteBuffer b, int from, int to) {
        if (count > 1 || count == 0 && http11) return 400;
        if (count == 0) return 0;
        while (from < to && (b.get(from) == ' ' || b.get(from) == '\t')) from++;
        while (to > from && (b.get(to - 1) == ' ' || b.get(to - 1) == '\t')) to--;
        return host(b, from, to) ? 0 : 400;
    }

    /** uri-host [":" port] (RFC 3986 §3.2.2, §3.2.3): IP-literal or a non-empty reg-name (IPv4 is one). */
    static boolean host(ByteBuffer b, int from, int to) {
        int i = from;
        if (i < to && b.get(i) == '[') {
            while (i < to && b.get(i) != ']') i++;
            if (i == to || !ipLiteral(b, from + 1, i)) return false;
            i++;
        } else {
            for (byte x; i < to && REG_NAME[(x = b.get(i)) & 0xff]; i++) {
                if (x == '%' && (i + 2 >= to || !hex(b.get(i + 1)) || !hex(b.get(i + 2)))) return false;
            }
            if (i == from) return false;
        }
        if (i == to) return true;
        if (b.get(i++) != ':') return false;
        while (i < to && digit(b.get(i))) i++;
        return i == to;
    }

    /** IPv6address or IPvFuture between the brackets (RFC 3986 §3.2.2). */
    private static boolean ipLiteral(ByteBuffer b, int from, int to) {
        if (from < to && (b.get(from) == 'v' || b.get(from) == 'V')) { // "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" )
            int i = from + 1;
            while (i < to && hex(b.get(i))) i++;
            if (i == from + 1 || i >= to - 1 || b.get(i) != '.') return false;
            for (i++; i < to; i++) if (!REG_NAME[b.get(i) & 0xff] && b.get(i) != ':' || b.get(i) == '%') return false;
            return true;
        }
        int groups = 0, i = from;
        boolean elided = false;
        if (to - i >= 2 && b.get(i) == ':' && b.get(i + 1) == ':') {
            elided = true;
            i += 2;
        }
        while (i < to) {
            int s = i;
            while (i < to && hex(b.get(i))) i++;
            if (i < to && b.get(i) == '.') { // the last 32 bits as an IPv4address
                if (!ipv4(b, s, to)) return false;
                groups += 2;
                break;
            }
            if (i == s || i - s > 4) return false;
            groups++;
            if (i == to) break;
            if (b.get(i++) != ':' || i == to) return false;
            if (b.get(i) == ':') {
                if (elided) return false;
                elided = true;
                i++;
            }
        }
        return elided ? groups <= 7 : groups == 8;
    }

    /** dec-octet "." dec-octet "." dec-octet "." dec-octet, without leading zeros. */
    private static boolean ipv4(ByteBuffer b, int from, int to) {
        int i = from;
        for (int octet = 0; octet < 4; octet++) {
            if (octet > 0 && (i >= to || b.get(i++) != '.')) return false;
            int s = i, v = 0;
            while (i < to && digit(b.get(i)) && i - s < 3) v = v * 10 + b.get(i++) - '0';
            if (i == s || v > 255 || i - s > 1 && b.get(s) == '0') return false;
        }
        return i == to;
    }

    /** Where the authority begins after "http://" or "https://" (scheme case-insensitive), or -1. */
    private static int scheme(ByteBuffer b, int t, int te) {
        int i = t;
        for (char c : "http".toCharArray()) if (i >= te || (b.get(i++) | 0x20) != c) return -1;
        if (i < te && (b.get(i) | 0x20) == 's') i++;
        return te - i >= 3 && is(b, i, "://") ? i + 3 : -1;
    }

    /** 0 if every byte of a path and query [from, to) is one RFC 3986 allows there, else 400. */
    private static int bytes(ByteBuffer b, int from, int to) {
        for (int i = from; i < to; i++) if (!TARGET[b.get(i) & 0xff]) return 400;
        return 0;
    }

    private static boolean is(ByteBuffer b, int at, String s) {
        for (int k = 0; k < s.length(); k++) if (b.get(at + k) != s.charAt(k)) return false;
        return true;
    }

    private static boolean digit(byte x) {
        return x >= '0' && x <= '9';
    }

    private static boolean hex(byte x) {
        return digit(x) || (x | 0x20) >= 'a' && (x | 0x20) <= 'f';
    }
}
