package javatio;

/** The contract's id rule, on the raw query string. */
final class Ids {
    private Ids() {}

    /** The id, or -1 when the query does not hold exactly one well-formed `id` parameter. */
    static int parse(String query) {
        int n = query.length();
        int found = 0;
        int id = -1;
        int start = 0;
        while (start <= n) {
            int end = query.indexOf('&', start);
            if (end < 0) {
                end = n;
            }
            if (end > start) {
                int eq = query.indexOf('=', start);
                if (eq < 0 || eq > end) {
                    eq = end;
                }
                byte[] name = decode(query, start, eq);
                if (name != null && name.length == 2 && name[0] == 'i' && name[1] == 'd') {
                    if (++found > 1) {
                        return -1;
                    }
                    id = eq < end ? digits(decode(query, eq + 1, end)) : -1;
                }
            }
            start = end + 1;
        }
        return found == 1 ? id : -1;
    }

    /** 1 to 9 decimal digits, no leading zero. */
    private static int digits(byte[] v) {
        if (v == null || v.length < 1 || v.length > 9 || v[0] == '0') {
            return -1;
        }
        int x = 0;
        for (byte b : v) {
            if (b < '0' || b > '9') {
                return -1;
            }
            x = x * 10 + (b - '0');
        }
        return x;
    }

    /** Percent-decoding (`+` is a space); null when malformed. */
    private static byte[] decode(String s, int from, int to) {
        byte[] out = new byte[to - from];
        int o = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '%') {
                if (i + 2 >= to) {
                    return null;
                }
                int hi = Character.digit(s.charAt(i + 1), 16), lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    return null;
                }
                out[o++] = (byte) (hi * 16 + lo);
                i += 2;
            } else if (c == '+') {
                out[o++] = ' ';
            } else if (c > 0x7f) {
                return null;
            } else {
                out[o++] = (byte) c;
            }
        }
        return o == out.length ? out : java.util.Arrays.copyOf(out, o);
    }
}
