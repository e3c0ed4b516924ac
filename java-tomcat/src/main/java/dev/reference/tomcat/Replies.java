package dev.reference.tomcat;

import java.io.IOException;

import jakarta.servlet.http.HttpServletResponse;

/** Writing a whole response: status, exact Content-Type, Content-Length, body. Never flushed here. */
public final class Replies {

    /** Tomcat stores this as type + charset and would print {@code text/plain;charset=utf-8};
     *  {@link dev.reference.tomcat.internals.ContentTypeValve} puts the contract's spelling back before the headers are written. */
    public static final String TEXT = "text/plain; charset=utf-8";

    private Replies() {
    }

    /**
     * Sets status and type and writes the body into Tomcat's response buffer (8 KiB; every body here
     * is far smaller), without committing: the headers are written when the request ends, after
     * {@link dev.reference.tomcat.internals.ContentTypeValve} has run. Content-Length is deliberately not set here: Tomcat 11
     * commits the response the moment the declared length has been written, which would be too early
     * for the valve. At the end of the request Tomcat sets Content-Length from the buffered bytes
     * (never chunked); for HEAD it does the same and then drops the body.
     */
    static void send(HttpServletResponse response, int status, String contentType, byte[] body) throws IOException {
        // Workaround: no Content-Length, or Tomcat 11 commits before ContentTypeValve runs (README, Workarounds)
        response.setStatus(status);
        response.setContentType(contentType);
        response.getOutputStream().write(body);
    }
}
