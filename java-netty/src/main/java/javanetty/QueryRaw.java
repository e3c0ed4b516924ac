package javanetty;

/** TEMPORARY (-Dquery=raw): the hand-written parse, measured against QueryStringDecoder.
 *
 * The contract's id rule: the query string holds exactly one parameter named "id" whose
 * percent-decoded value ("+" is a space) is 1 to 9 digits without a leading zero. Other
 * parameters are ignored. Works on the raw URI (Netty's HttpRequest.uri()), allocation-free.
 */
final class QueryRaw {
    private QueryRaw() {
    }

    /** The id, or -1 for a 400. {@code q} is the index of '?' in {@code uri}, or -1. */
    static int id(String uri, int q) {
        if (q < 0) return -1;
        int n = uri.length();
        int found = 0;
        int id = -1;
        for (int start = q + 1; start <= n; ) {
            int end = uri.indexOf('&', start);
            if (end < 0) end = n;
            int eq = uri.indexOf('=', start);
            if (eq < 0 || eq > end) eq = end;
            if (isId(uri, start, eq)) {
                if (++found > 1) return -1;
                id = eq < end ? digits(uri, eq + 1, end) : -1;
            }
            start = end + 1;
        }
        return found == 1 ? id : -1;
    }

    /** Whether uri[from, to) percent-decodes to exactly "id". */
    private static boolean isId(String uri, int from, int to) {
        int matched = 0;
        for (int i = from; i < to; ) {
            int c = uri.charAt(i);
            if (c == '%') {
                c = hex(uri, i, to);
                if (c < 0) return false;
                i += 3;
            } else {
                if (c == '+') c = ' ';
                i++;
            }
            if (matched >= 2 || c != "id".charAt(matched)) return false;
            matched++;
        }
        return matched == 2;
    }

    /** The value uri[from, to) percent-decoded as 1-9 digits without a leading zero, else -1. */
    private static int digits(String uri, int from, int to) {
        int value = 0;
        int count = 0;
        for (int i = from; i < to; ) {
            int c = uri.charAt(i);
            if (c == '%') {
                c = hex(uri, i, to);
                if (c < 0) return -1;
                i += 3;
            } else {
                i++; // '+' decodes to a space, which is not a digit either
            }
            if (c < '0' || c > '9' || (count == 0 && c == '0') || ++count > 9) return -1;
            value = value * 10 + (c - '0');
        }
        return count == 0 ? -1 : value;
    }

    /** The byte encoded by "%XY" at uri[i], or -1 when malformed. */
    private static int hex(String uri, int i, int to) {
        if (i + 2 >= to) return -1;
        int hi = Character.digit(uri.charAt(i + 1), 16);
        int lo = Character.digit(uri.charAt(i + 2), 16);
        return hi < 0 || lo < 0 ? -1 : hi << 4 | lo;
    }
}
