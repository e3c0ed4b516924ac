package bench.voovan.backend;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.codec.ByteArrayCodec;
import io.lettuce.core.codec.RedisCodec;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.protocol.ProtocolVersion;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.Delay;

import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Redis through Lettuce's asynchronous API: one connection shared by every request (thread-safe,
 * pipelined), its event loop completes each read. Replies are paired with commands by Lettuce's
 * in-order command stack, timed-out ones included, so a late reply after a freeze is consumed by its
 * own command: no desync.
 */
public final class Redis implements Backend {
    private static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.ASCII, ByteArrayCodec.INSTANCE);
    /** A Redis that is down at start is tried again this often (the contract allows 2 s to notice it). */
    private static final long RETRY_MS = 100;

    private final ClientResources resources;
    private final RedisClient client;
    private final RedisURI uri;
    /** null until the first connect succeeds; from then on Lettuce's auto-reconnect keeps it. */
    private volatile RedisAsyncCommands<String, byte[]> commands;

    public Redis(String host, int port, int timeoutMs) {
        Duration timeout = Duration.ofMillis(timeoutMs);
        resources = DefaultClientResources.builder()
                .ioThreadPoolSize(1)          // one connection: one event loop
                .computationThreadPoolSize(1) // timeouts and reconnects only
                // a Redis that comes back is found within 100 ms (the contract allows 2 s)
                .reconnectDelay(Delay.exponential(Duration.ofMillis(5), Duration.ofMillis(RETRY_MS), 2, TimeUnit.MILLISECONDS))
                .build();
        uri = RedisURI.builder().withHost(host).withPort(port).withTimeout(timeout).build();
        client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                .protocolVersion(ProtocolVersion.RESP2) // no HELLO on connect
                .autoReconnect(true)
                // not connected: fail at once (503) instead of buffering commands until Redis returns
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                // commands in flight are bounded (Lettuce's default is unbounded): past this Lettuce
                // refuses new ones at once (503), e.g. while Redis is frozen
                .requestQueueSize(MAX_WAITING)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .socketOptions(SocketOptions.builder().connectTimeout(timeout).tcpNoDelay(true).build())
                .build());
        connect();
    }

    /**
     * Lettuce reconnects a connection it once had, but its first connect fails for good when Redis is
     * down at start; so the first one is retried here, in the background, until it succeeds.
     */
    private void connect() {
        // Workaround: Lettuce's first connect is not retried (README, Workarounds)
        client.connectAsync(CODEC, uri).whenComplete((connection, failure) -> {
            if (failure == null) {
                commands = connection.async();
            } else {
                resources.eventExecutorGroup().schedule(this::connect, RETRY_MS, TimeUnit.MILLISECONDS);
            }
        });
    }

    @Override
    public void get(int id, long deadline, Done done) {
        RedisAsyncCommands<String, byte[]> c = commands;
        if (c == null) {
            done.done(null, new Unavailable("redis: not connected yet", null));
            return;
        }
        c.get("greeting:" + id).whenComplete((value, failure) ->
                done.done(value, failure == null ? null : classify(failure)));
    }

    /**
     * An error reply (e.g. ERR, NOPERM) is Redis answering: 500, unless it is a busy reply. Not
     * connected, timed out, queue full, busy: 503.
     */
    private static Throwable classify(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof RedisCommandExecutionException) {
                return busy(t.getMessage()) ? new Unavailable("redis: " + t.getMessage(), failure) : failure;
            }
            if (t instanceof RedisException || t instanceof IOException || t instanceof TimeoutException) {
                return new Unavailable("redis: " + t.getMessage(), failure);
            }
        }
        return failure;
    }

    private static final Set<String> BUSY = Set.of("LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN");

    /**
     * Redis's busy replies (CONTRACT.md, "Unavailable, busy, or an error"): the server is up but says it
     * cannot serve now (loading its dataset, running a script, its primary or cluster down): 503. Lettuce
     * turns every error reply into a RedisCommandExecutionException whose message is the reply's text.
     */
    static boolean busy(String reply) {
        if (reply == null) return false;
        int space = reply.indexOf(' ');
        return BUSY.contains(space < 0 ? reply : reply.substring(0, space));
    }
}
