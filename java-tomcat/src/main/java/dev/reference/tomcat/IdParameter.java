package dev.reference.tomcat;

import java.nio.charset.StandardCharsets;

/**
 * The contract's {@code id}: exactly one parameter named {@code id} in the raw query string,
 * percent-decoded ({@code +} is a space), then 1 to 9 ASCII digits without a leading zero.
 * Anything else is a 400, decided here before any backend is touched. The raw query string is
 * parsed on purpose (not {@code getParameter}), so that the container's own leniencies (skipping
 * a malformed pair, decoding with another charset) cannot change the answer.
 */
final class IdParameter {

    private IdParameter() {
    }

    static int parse(String query) {
        if (query == null) {
            throw ContractError.BAD_REQUEST;
        }
        String value = null;
        int count = 0;
        int start = 0;
        int length = query.length();
        while (start <= length) {
            int end = query.indexOf('&', start);
            if (end < 0) {
                end = length;
            }
            if (end > start) {
                int eq = query.indexOf('=', start);
                int nameEnd = eq < 0 || eq > end ? end : eq;
                if (isId(query, start, nameEnd)) {
                    count++;
                    value = nameEnd < end ? decode(query, nameEnd + 1, end) : "";
                }
            }
            start = end + 1;
        }
        if (count != 1 || value == null) {
            throw ContractError.BAD_REQUEST;
        }
        return digits(value);
    }

    /** Is the (percent-encoded) name exactly "id" once decoded? */
    private static boolean isId(String query, int from, int to) {
        if (to - from == 2) {
            return query.charAt(from) == 'i' && query.charAt(from + 1) == 'd';
        }
        if (query.indexOf('%', from) < 0 || query.indexOf('%', from) >= to) {
            return false;
        }
        String name;
        try {
            name = decode(query, from, to);
        } catch (ContractError e) {
            return false; // a malformed name is some other parameter, and other parameters are ignored
        }
        return "id".equals(name);
    }

    /** application/x-www-form-urlencoded decoding of query[from, to) as UTF-8; malformed escapes are a 400. */
    private static String decode(String query, int from, int to) {
        boolean plain = true;
        for (int i = from; i < to; i++) {
            char c = query.charAt(i);
            if (c == '%' || c == '+') {
                plain = false;
                break;
            }
        }
        if (plain) {
            return query.substring(from, to);
        }
        byte[] bytes = new byte[to - from];
        int n = 0;
        for (int i = from; i < to; i++) {
            char c = query.charAt(i);
            if (c == '+') {
                bytes[n++] = ' ';
            } else if (c == '%') {
                if (i + 2 >= to) {
                    throw ContractError.BAD_REQUEST;
                }
                int hi = Character.digit(query.charAt(i + 1), 16);
                int lo = Character.digit(query.charAt(i + 2), 16);
                if (hi < 0 || lo < 0) {
                    throw ContractError.BAD_REQUEST;
                }
                bytes[n++] = (byte) (hi << 4 | lo);
                i += 2;
            } else {
                bytes[n++] = (byte) c; // a query string that reached us is ASCII
            }
        }
        return new String(bytes, 0, n, StandardCharsets.UTF_8);
    }

    private static int digits(String value) {
        int length = value.length();
        if (length < 1 || length > 9 || value.charAt(0) == '0') {
            throw ContractError.BAD_REQUEST;
        }
        int id = 0;
        for (int i = 0; i < length; i++) {
            char c = value.charAt(i);
            if (c < '0' || c > '9') {
                throw ContractError.BAD_REQUEST;
            }
            id = id * 10 + (c - '0');
        }
        return id;
    }
}
