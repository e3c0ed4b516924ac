package javanetty;

import io.netty.handler.codec.DecoderException;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.util.NetUtil;

/**
 * The contract's request validity rules that Netty's {@code HttpRequestDecoder} leaves to the
 * application (RFC 9112 §2.3, §3, §3.2; RFC 9110 §4.2, §7.2): the version's exact spelling, the
 * method's length and CONNECT, the request-target's form and bytes, and Host. Netty already refuses a
 * method that is not a token ({@code HttpMethod}), a version that is not one digit, a dot, one digit
 * (strict {@code HttpVersion.valueOf}), a field line without a colon and a NUL in a value
 * ({@code setValidateHeaders}), and unfolds obs-fold into the previous value with one space
 * ({@code HttpObjectDecoder.readHeaders}). {@link RequestDecoder} calls {@link #version} on each
 * request line's version word and {@link #check} on each request it decodes; a refusal becomes the
 * request's failed {@code DecoderResult}, answered by {@link HttpHandler} with its status, then close.
 */
final class RequestValidity {
    /** The contract: a longer method token is a 501 (longer than any implemented). */
    static final int MAX_METHOD = 32;

    /** A refusal: the answer ({@link Responses} index) and why; one instance each, no stack trace. */
    static final class Invalid extends DecoderException {
        final int answer;

        private Invalid(int answer, String message) {
            super(message);
            this.answer = answer;
        }

        @Override
        public synchronized Throwable fillInStackTrace() {
            return this;
        }
    }

    static final Invalid BAD_VERSION = new Invalid(Responses.BAD_REQUEST, "version not HTTP/d.d (case-sensitive)");
    static final Invalid OTHER_MAJOR = new Invalid(Responses.VERSION_NOT_SUPPORTED, "HTTP major version other than 1");
    static final Invalid CONNECT = new Invalid(Responses.NOT_IMPLEMENTED, "CONNECT");
    static final Invalid LONG_METHOD = new Invalid(Responses.NOT_IMPLEMENTED, "method over " + MAX_METHOD + " bytes");
    static final Invalid NO_HOST = new Invalid(Responses.BAD_REQUEST, "HTTP/1.1 without Host");
    static final Invalid TWO_HOSTS = new Invalid(Responses.BAD_REQUEST, "more than one Host");
    static final Invalid BAD_HOST = new Invalid(Responses.BAD_REQUEST, "Host not uri-host [\":\" port]");
    static final Invalid BAD_TARGET = new Invalid(Responses.BAD_REQUEST, "request-target not origin- or absolute-form");

    private RequestValidity() {
    }

    /** RFC 3986's bytes of a path and query: unreserved, sub-delims, ':', '@', '/', '?', and '%' (pct-encoded). */
    private static final boolean[] TARGET = new boolean[128];
    /** RFC 3986's reg-name (unreserved, sub-delims, '%'), less ',' (a list of hosts, never one host). */
    private static final boolean[] REG_NAME = new boolean[128];

    static {
        String unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~";
        String subDelims = "!$&'()*+,;=";
        for (char c : (unreserved + subDelims + ":@/?%").toCharArray()) TARGET[c] = true;
        for (char c : (unreserved + subDelims + "%").toCharArray()) REG_NAME[c] = true;
        REG_NAME[','] = false;
    }

    /**
     * A request line's version word, as sent (Netty upper-cases it before parsing): exactly "HTTP/",
     * a digit, '.', a digit (RFC 9112 §2.3: HTTP-name is case-sensitive). Else a 400.
     */
    static void version(String v) {
        if (v.length() != 8 || !v.startsWith("HTTP/") || !digit(v.charAt(5)) || v.charAt(6) != '.'
                || !digit(v.charAt(7))) {
            throw BAD_VERSION;
        }
    }

    /**
     * The refusal for a decoded request, or null if it is valid; an absolute-form target is replaced
     * by its path and query (RFC 9112 §3.2.2: its authority is the request's host, Host is ignored).
     * {@code hostFields} is the number of Host field lines the decoder saw.
     */
    static Invalid check(HttpRequest req, int hostFields) {
        HttpVersion version = req.protocolVersion();
        if (version.majorVersion() != 1) return OTHER_MAJOR; // RFC 9110 §15.6.6
        HttpMethod method = req.method();
        if (method.name().length() > MAX_METHOD) return LONG_METHOD; // RFC 9112 §3
        if (HttpMethod.CONNECT.equals(method)) return CONNECT; // RFC 9110 §15.6.2: supported for no resource
        // RFC 9112 §3.2: exactly one Host in HTTP/1.1, at most one in HTTP/1.0, each valid
        if (hostFields > 1) return TWO_HOSTS;
        String host = req.headers().get(HttpHeaderNames.HOST);
        if (host == null) {
            if (version.minorVersion() != 0) return NO_HOST;
        } else if (!authority(host, 0, host.length())) {
            return BAD_HOST;
        }
        return target(req);
    }

    /** Origin-form; absolute-form with "http" (rewritten to its path); asterisk-form for OPTIONS only. */
    private static Invalid target(HttpRequest req) {
        String uri = req.uri();
        if (uri.startsWith("/")) {
            return pathAndQuery(uri, 0) ? null : BAD_TARGET;
        }
        if (uri.equals("*")) {
            return HttpMethod.OPTIONS.equals(req.method()) ? null : BAD_TARGET; // RFC 9112 §3.2.4
        }
        if (uri.regionMatches(true, 0, "http://", 0, 7)) { // RFC 9112 §3.2.2; the scheme is case-insensitive
            int end = 7;
            while (end < uri.length() && uri.charAt(end) != '/' && uri.charAt(end) != '?') end++;
            if (!authority(uri, 7, end) || !pathAndQuery(uri, end)) return BAD_TARGET;
            req.setUri(end == uri.length() ? "/" : uri.charAt(end) == '?' ? "/" + uri.substring(end) : uri.substring(end));
            return null;
        }
        return BAD_TARGET; // authority-form is CONNECT's (RFC 9112 §3.2.3), refused above; anything else
    }

    /** Every char from {@code from} is a byte RFC 3986 allows in a path or query (none above 0x7F, no CTL, no space). */
    static boolean pathAndQuery(String s, int from) {
        for (int i = from, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (c >= 128 || !TARGET[c]) return false;
        }
        return true;
    }

    /**
     * {@code uri-host [":" port]} (RFC 3986 §3.2.2, §3.2.3): a reg-name (an IPv4 address is one) or an
     * IPv6 literal in brackets, then optionally ':' and digits. No userinfo, path, comma, space; not empty.
     */
    static boolean authority(String s, int from, int to) {
        int i = from;
        if (i < to && s.charAt(i) == '[') {
            int close = s.indexOf(']', i);
            if (close < 0 || close >= to || !NetUtil.isValidIpV6Address(s.substring(i + 1, close))) return false;
            i = close + 1;
        } else {
            while (i < to && s.charAt(i) < 128 && REG_NAME[s.charAt(i)]) i++;
            if (i == from) return false; // an empty host
        }
        if (i == to) return true;
        if (s.charAt(i++) != ':') return false;
        while (i < to && digit(s.charAt(i))) i++;
        return i == to;
    }

    private static boolean digit(char c) {
        return c >= '0' && c <= '9';
    }
}
