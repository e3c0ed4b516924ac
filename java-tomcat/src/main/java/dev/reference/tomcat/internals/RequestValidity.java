package dev.reference.tomcat.internals;

import org.apache.tomcat.util.buf.MessageBytes;

/**
 * The contract's request-validity rules (CONTRACT.md, "Request validity") that Tomcat's HTTP/1.1
 * parser lets through, decided on the head it has parsed, before anything is routed. Tomcat itself
 * refuses the rest: no Host or two in HTTP/1.1, a Host with userinfo, a path or a list, asterisk- and
 * authority-form targets, raw bytes in the target, a method that is not a token, {@code http/1.1},
 * CONNECT (501), obs-fold and bad field lines. What it lets through:
 * <ul>
 * <li>an empty Host: {@code AbstractProcessor.parseHost} serves it with an empty server name, which
 * RFC 7230 allowed and RFC 9110 §4.2.1 does not for an {@code http} URI: 400;</li>
 * <li>a method longer than any this server implements: Tomcat reads any token up to the head limit,
 * and RFC 9112 §3 says such a method SHOULD get 501;</li>
 * <li>a version whose characters are all legal ({@code HTTP/}, digits, dots: the only check
 * {@code Http11InputBuffer.parseRequestLine} makes) but which breaks RFC 9112 §2.3's grammar
 * {@code "HTTP/" DIGIT "." DIGIT} ({@code HTTP/1}, {@code HTTP/01.01}): Tomcat's
 * {@code prepareRequestProtocol} answers every version but 1.0 and 1.1 with 505, meant for a
 * well-formed one; a malformed one is a bad request line, 400.</li>
 * </ul>
 */
public final class RequestValidity {

    /** The longest method token served (the contract's limit); a longer one gets 501. */
    public static final int MAX_METHOD = 32;

    private RequestValidity() {
    }

    /**
     * The status this request is refused with, or 0 to leave it as Tomcat decided.
     *
     * @param method the request's method token
     * @param protocol the version as sent (Tomcat rewrites only {@code HTTP/1.0} and {@code HTTP/1.1})
     * @param host the Host field's value, {@code null} without one
     * @param tomcatStatus the response status Tomcat has set so far (400 or more when it refuses)
     */
    public static int refusal(MessageBytes method, MessageBytes protocol, MessageBytes host, int tomcatStatus) {
        if (tomcatStatus == 505) {
            // Tomcat's answer to every version but HTTP/1.0 and HTTP/1.1; right only for a well-formed one.
            return isWellFormedVersion(protocol.toString()) ? 0 : 400;
        }
        if (tomcatStatus >= 400) {
            return 0; // refused already
        }
        if (host != null && !host.isNull() && host.getLength() == 0) {
            return 400;
        }
        if (method.getLength() > MAX_METHOD) {
            return 501;
        }
        return 0;
    }

    /** {@code "HTTP/" DIGIT "." DIGIT} (RFC 9112 §2.3). */
    static boolean isWellFormedVersion(String version) {
        return version != null && version.length() == 8 && version.startsWith("HTTP/")
                && isDigit(version.charAt(5)) && version.charAt(6) == '.' && isDigit(version.charAt(7));
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}
