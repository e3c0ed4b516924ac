package bench.voovan.workaround;

import org.voovan.http.message.Request;
import org.voovan.network.IoFilter;
import org.voovan.network.IoSession;

/**
 * Runs after Voovan's decoder and before its handler builds the HttpRequest, which URL-decodes the
 * whole query string and throws on a malformed escape such as %zz (the connection then closes without
 * an answer). The raw query is re-escaped so that Voovan's decoding gives back the raw text, which the
 * routers parse (Ids).
 */
final class RawQueryFilter implements IoFilter {
    @Override
    public Object decode(IoSession session, Object object) {
        if (object instanceof Request r) {
            String q = r.protocol().getQueryString();
            // Workaround: Voovan decodes the whole query at once (README, Workarounds)
            if (q != null && (q.indexOf('%') >= 0 || q.indexOf('+') >= 0)) {
                r.protocol().setQueryString(q.replace("%", "%25").replace("+", "%2B"));
            }
        }
        return object;
    }

    @Override
    public Object encode(IoSession session, Object object) {
        return object;
    }
}
