package bench.voovan;

import java.io.ByteArrayOutputStream;

/** The `id` parameter, by the contract: exactly one, percent-decoded ('+' is a space), 1-9 digits, no leading zero. */
final class Ids {
    private Ids() {}

    /** The id, or -1 when the query string does not hold exactly one well-formed id. */
    static int parse(String rawQuery) {
        if (rawQuery == null || rawQuery.isEmpty()) return -1;
        String value = null;
        int found = 0;
        int start = 0;
        int len = rawQuery.length();
        while (start <= len) {
            int amp = rawQuery.indexOf('&', start);
            if (amp < 0) amp = len;
            if (amp > start) {
                int eq = rawQuery.indexOf('=', start);
                int nameEnd = eq >= 0 && eq < amp ? eq : amp;
                String name = decode(rawQuery, start, nameEnd);
                if ("id".equals(name)) {
                    found++;
                    value = nameEnd < amp ? decode(rawQuery, nameEnd + 1, amp) : null;
                    if (value == null) return -1; // "id" without '=' or with a malformed escape
                }
            }
            start = amp + 1;
        }
        if (found != 1) return -1;
        int n = value.length();
        if (n < 1 || n > 9 || value.charAt(0) == '0') return -1;
        int id = 0;
        for (int i = 0; i < n; i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') return -1;
            id = id * 10 + (c - '0');
        }
        return id;
    }

    /** application/x-www-form-urlencoded decoding of s[from, to); null when an escape is malformed. */
    static String decode(String s, int from, int to) {
        boolean plain = true;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '%' || c == '+') {
                plain = false;
                break;
            }
        }
        if (plain) return s.substring(from, to);
        ByteArrayOutputStream out = new ByteArrayOutputStream(to - from);
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (c == '+') {
                out.write(' ');
            } else if (c == '%') {
                if (i + 2 >= to) return null; // "%" or "%4" at the end
                int hi = Character.digit(s.charAt(i + 1), 16);
                int lo = Character.digit(s.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) return null;
                out.write((hi << 4) | lo);
                i += 2;
            } else if (c < 0x80) {
                out.write(c);
            } else {
                byte[] b = String.valueOf(c).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                out.write(b, 0, b.length);
            }
        }
        return out.toString(java.nio.charset.StandardCharsets.UTF_8);
    }
}
