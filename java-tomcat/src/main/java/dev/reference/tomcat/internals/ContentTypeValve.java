package dev.reference.tomcat.internals;

import java.io.IOException;

import jakarta.servlet.ServletException;
import org.apache.catalina.connector.Request;
import org.apache.catalina.connector.Response;
import org.apache.catalina.valves.ValveBase;
import org.apache.tomcat.util.buf.CharsetHolder;

import dev.reference.tomcat.Replies;

/**
 * Tomcat parses every Content-Type set through the Servlet API into a type and a charset and prints
 * them back as {@code type;charset=name}, without the space; the contract's bytes are
 * {@code text/plain; charset=utf-8}. This valve runs around the whole application (it is a Context
 * valve) and, while the response is not yet committed, hands Tomcat the exact header text with
 * {@code setContentTypeNoCharset}, which Tomcat prints verbatim. The handlers never flush, so the
 * response is always still uncommitted here. Bodies are written as bytes, so the charset Tomcat no
 * longer knows about is never used to encode anything.
 */
public final class ContentTypeValve extends ValveBase {

    private static final String TOMCAT_SPELLING = "text/plain;charset=utf-8";

    public ContentTypeValve() {
        super(true); // async-supported, so it does not disable async processing for the context
    }

    @Override
    public void invoke(Request request, Response response) throws IOException, ServletException {
        getNext().invoke(request, response);
        org.apache.coyote.Response coyote = response.getCoyoteResponse();
        // Workaround: Tomcat respells the contract's Content-Type (README, Workarounds)
        if (!coyote.isCommitted() && TOMCAT_SPELLING.equals(coyote.getContentType())) {
            coyote.setCharsetHolder(CharsetHolder.EMPTY);
            coyote.setContentTypeNoCharset(Replies.TEXT);
        }
    }
}
