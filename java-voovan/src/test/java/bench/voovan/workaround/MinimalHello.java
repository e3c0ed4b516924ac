package bench.voovan.workaround;

import bench.voovan.Env;
import bench.voovan.Reply;

import org.voovan.http.server.HttpRouter;
import org.voovan.http.server.WebServer;
import org.voovan.http.server.context.HttpFilterConfig;
import org.voovan.http.server.context.WebServerConfig;
import org.voovan.network.IoFilter;
import org.voovan.network.SocketContext;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;

/**
 * A measuring aid, not part of the stack (NOTES.md, the note on /hello against TechEmpower's Voovan): Voovan's
 * WebServer with the stack's server settings (as conf/web.json sets them) answering GET /hello with the contract's bytes and headers
 * (200, Content-Type text/plain; charset=utf-8, Voovan's Content-Length, Date and Server) the way Voovan's
 * own demos do: the router fills the thread's HttpResponse and Voovan writes it. None of the stack's
 * per-request work unless named in the arguments, each adding one piece exactly as Workarounds installs it:
 * {@code guard} (HeadGuard before Voovan's decoder), {@code filter} (ContractFilter),
 * {@code rawquery} (RawQueryFilter), {@code exchange} (Conn.Handler, Conn's timer, and the answer written
 * through Exchange and Conn instead of by Voovan); and {@code plain}: "Content-Type: text/plain" instead of the
 * contract's (with STACK_NAME=v, the very header bytes of TechEmpower's Voovan). Run it with the manifest's JVM flags in place of
 * bench.voovan.Main (as bench.voovan.workaround.MinimalHello), with HOST, PORT and STACK_NAME set.
 */
public final class MinimalHello {
    public static void main(String[] args) throws Exception {
        Set<String> pieces = Set.of(args);
        System.setProperty("Server", Env.require("STACK_NAME"));
        int headTimeoutMs = Env.requireInt("HEAD_TIMEOUT_MS");
        int idleTimeoutMs = Env.requireInt("IDLE_TIMEOUT_MS");

        WebServerConfig cfg = new WebServerConfig();
        cfg.setHost(Env.require("HOST"));
        cfg.setPort(Env.requireInt("PORT"));
        cfg.setGzip(false);
        cfg.setAccessLog(false);
        cfg.setCache(false);
        cfg.setEnableWebSocket(false);
        cfg.setMatchRouteIgnoreCase(false);
        cfg.setKeepAliveTimeout(Math.max(1, idleTimeoutMs / 1000));
        cfg.setReadTimeout(Math.max(1, (headTimeoutMs + 999) / 1000));
        cfg.setSendTimeout(1);
        Workarounds.widenParserTokens(HeadGuard.MAX_HEAD);
        if (pieces.contains("filter")) {
            cfg.getFilterConfigs().add(new HttpFilterConfig("contract", ContractFilter.class.getName(), null));
        }
        WebServer server = WebServer.newInstance(cfg);

        byte[] hello = "Hello, World!".getBytes(StandardCharsets.UTF_8);
        String contentType = pieces.contains("plain") ? "text/plain" : Reply.TEXT;
        HttpRouter router = pieces.contains("exchange")
                ? (req, resp) -> Exchange.of(req, resp).reply(Reply.HELLO)
                : (req, resp) -> {
                    resp.header().put("Content-Type", contentType);
                    resp.write(hello);
                };
        server.get("/hello", router);
        if (pieces.contains("filter")) ContractFilter.paths = Set.of("/hello");
        if (pieces.contains("exchange")) {
            Workarounds.limits(headTimeoutMs, idleTimeoutMs);
            Conn.startTimer();
        }
        Workarounds.startDateRefresher();
        server.syncServe();
        SocketContext socket = server.getServerSocket();
        if (pieces.contains("exchange")) socket.handler(new Conn.Handler(socket.handler()));
        List<IoFilter> filters = socket.filterChain().getContianer();
        if (pieces.contains("guard")) filters.add(0, new HeadGuard());
        if (pieces.contains("rawquery")) filters.add(new RawQueryFilter());
        System.out.println("MinimalHello: listening, pieces " + pieces);
        Thread.currentThread().join();
    }
}
