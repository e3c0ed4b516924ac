package javatio;

import java.nio.ByteBuffer;

/**
 * Request validity (CONTRACT.md, Request validity): the method, request-target and Host rules of RFC 9112
 * §3 and RFC 9110 §4.2, §7.2, on the bytes of a head. t-io core has no HTTP layer and so no request hook
 * that could check them; HttpParser calls these while it reads the request line and the Host field.
 */
// Workaround: t-io core has no HTTP request validation (README, Workarounds)
final class RequestValidity {
    private RequestValidity() {}

    /** The longest method served; a longer one is longer than any implemented (RFC 9112 §3): 501. */
    static final int MAX_METHOD = 32;

    /** RFC 3986 in a target: unreserved, sub-delims, ":", "@", "/", "?" and the "%" of pct-encoded. */
    private static final boolean[] TARGET = new boolean[256];
    /** RFC 3986 reg-name (unreserved, sub-delims, "%") without ",": a list is not a host. */
    private static final boolean[] REG_NAME = new boolean[256];

    static {
        for (char ch = '0'; ch <= '9'; ch++) REG_NAME[ch] = true;
        for (char ch = 'a'; ch <= 'z'; ch++) REG_NAME[ch] = true;
        for (char ch = 'A'; ch <= 'Z'; ch++) REG_NAME[ch] = true;
        for (char ch : "-._~!$&'()*+;=%".toCharArray()) REG_NAME[ch] = true;
        System.arraycopy(REG_NAME, 0, TARGET, 0, 256);
        for (char ch : ",:@/?".toCharArray()) TARGET[ch] = true;
    }

    /** 0 for a method this server answers (it is a token: HttpParser checks), 501 for CONNECT or one too long. */
    static int method(ByteBuffer b, int from, int to) {
        if (to - from > MAX_METHOD || (to - from == 7 && HttpParser.startsWith(b, from, "CONNECT"))) {
            return 501; // RFC 9110 §15.6.2: CONNECT is supported for no resource here
        }
        return 0;
    }

    /**
     * Where the path of the request-target {@code [from, to)} starts: {@code from} for origin-form (and
     * asterisk-form with OPTIONS), just after the authority for absolute-form ({@code http://} or
     * {@code https://}, RFC 9112 §3.2.2; the path may then be empty or start with "?"). -1 (400) for
     * authority-form, asterisk-form with another method, an invalid authority, or a byte RFC 3986 does not
     * allow in a target (above 0x7F, a control byte, a space, {@code "#<>[\]^`{|}}).
     */
    static int target(ByteBuffer b, int from, int to, boolean options) {
        int path = from;
        byte first = b.get(from);
        if (first == '*' && to - from == 1) {
            return options ? from : -1; // RFC 9112 §3.2.4: asterisk-form is for OPTIONS
        }
        if (first != '/') {
            int authority = afterScheme(b, from, to);
            if (authority < 0) {
                return -1; // authority-form (host:port, RFC 9112 §3.2.3, CONNECT only) or not a target
            }
            path = authority;
            while (path < to && b.get(path) != '/' && b.get(path) != '?') {
                path++;
            }
            if (!host(b, authority, path)) {
                return -1;
            }
        }
        for (int i = path; i < to; i++) {
            if (!TARGET[b.get(i) & 0xff]) {
                return -1;
            }
        }
        return path;
    }

    /** After "http://" or "https://" (the scheme in any case) at {@code from}; -1 otherwise. */
    private static int afterScheme(ByteBuffer b, int from, int to) {
        int i = from;
        for (char ch : "http".toCharArray()) {
            if (i == to || (b.get(i++) | 0x20) != ch) {
                return -1;
            }
        }
        if (i < to && (b.get(i) | 0x20) == 's') {
            i++;
        }
        return to - i >= 3 && b.get(i) == ':' && b.get(i + 1) == '/' && b.get(i + 2) == '/' ? i + 3 : -1;
    }

    /**
     * A Host value (its whitespace trimmed) is {@code uri-host [":" port]} (RFC 9112 §3.2, RFC 3986 §3.2.2):
     * a reg-name or IPv4 address, or an IPv6 literal in brackets; never empty (RFC 9110 §4.2.1), no
     * userinfo, path, comma or space.
     */
    static boolean host(ByteBuffer b, int from, int to) {
        int end;
        if (from < to && b.get(from) == '[') {
            end = from + 1;
            while (end < to && b.get(end) != ']') {
                end++;
            }
            if (end == to || !ipv6(HttpParser.ascii(b, from + 1, end))) {
                return false;
            }
            end++;
        } else {
            end = from;
            while (end < to && REG_NAME[b.get(end) & 0xff]) {
                end++;
            }
            if (end == from) {
                return false;
            }
        }
        if (end == to) {
            return true;
        }
        if (b.get(end) != ':') {
            return false;
        }
        for (int i = end + 1; i < to; i++) {
            if (b.get(i) < '0' || b.get(i) > '9') {
                return false;
            }
        }
        return true;
    }

    /** RFC 3986 IPv6address: eight groups of 1-4 hex digits, or fewer around one "::"; the last two may be IPv4. */
    static boolean ipv6(String s) {
        int gap = s.indexOf("::");
        if (gap >= 0 && s.indexOf("::", gap + 1) >= 0) {
            return false;
        }
        String[] head = gap < 0 ? s.split(":", -1) : s.substring(0, gap).isEmpty() ? new String[0] : s.substring(0, gap).split(":", -1);
        String[] tail = gap < 0 ? new String[0] : s.substring(gap + 2).isEmpty() ? new String[0] : s.substring(gap + 2).split(":", -1);
        int groups = 0;
        String[][] parts = {head, tail};
        for (int p = 0; p < 2; p++) {
            for (int i = 0; i < parts[p].length; i++) {
                String g = parts[p][i];
                boolean last = p == 1 ? i == parts[1].length - 1 : gap < 0 && i == parts[0].length - 1;
                if (last && g.indexOf('.') >= 0) {
                    if (!ipv4(g)) {
                        return false;
                    }
                    groups += 2;
                } else if (g.isEmpty() || g.length() > 4 || !g.chars().allMatch(ch -> Character.digit(ch, 16) >= 0)) {
                    return false;
                } else {
                    groups++;
                }
            }
        }
        return gap < 0 ? groups == 8 : groups <= 7;
    }

    /** RFC 3986 IPv4address: four dec-octets (0-255, no leading zero). */
    private static boolean ipv4(String s) {
        String[] octets = s.split("\\.", -1);
        if (octets.length != 4) {
            return false;
        }
        for (String o : octets) {
            if (o.isEmpty() || o.length() > 3 || (o.length() > 1 && o.charAt(0) == '0')
                    || !o.chars().allMatch(ch -> ch >= '0' && ch <= '9') || Integer.parseInt(o) > 255) {
                return false;
            }
        }
        return true;
    }
}
