package bench.voovan.workaround;

import bench.voovan.Reply;
import org.voovan.http.server.HttpFilter;
import org.voovan.http.server.HttpRequest;
import org.voovan.http.server.HttpResponse;
import org.voovan.http.server.context.HttpFilterConfig;

import java.util.Set;

/**
 * Voovan's HttpFilter (listed in conf/web.json, "Filters"), run before its router: a path not routed
 * exactly (case-sensitively) is 404, another method on a routed path 405; only GET and HEAD on the
 * routed paths reach the routers.
 */
public final class ContractFilter implements HttpFilter {
    // Workaround: Voovan's route matching, static-file fallback and HTML error pages (README, Workarounds)
    static volatile Set<String> paths = Set.of();

    @Override
    public Object onRequest(HttpFilterConfig filterConfig, HttpRequest request, HttpResponse response,
                            Object prevFilterResult) {
        if (!paths.contains(request.protocol().getPath())) {
            Exchange.of(request, response).reply(Reply.NOT_FOUND);
            return null; // null: Voovan skips its router
        }
        String method = request.protocol().getMethod();
        if (!"GET".equals(method) && !"HEAD".equals(method)) {
            Exchange.of(request, response).reply(Reply.METHOD_NOT_ALLOWED);
            return null;
        }
        return Boolean.TRUE;
    }

    @Override
    public Object onResponse(HttpFilterConfig filterConfig, HttpRequest request, HttpResponse response,
                             Object prevFilterResult) {
        return Boolean.TRUE;
    }
}
