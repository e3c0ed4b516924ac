package javatio;

import java.io.IOException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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

/**
 * Redis through Lettuce's asynchronous API: one connection shared by every request (Lettuce is
 * thread-safe and pipelines: commands issued while others are in flight go out in the same write, their
 * replies come back in the same read). The handler issues the GET and returns; Lettuce's event loop
 * completes the reply. Replies are paired with commands by Lettuce's in-order command stack, timed-out
 * ones included, so a late reply after a freeze is consumed by its own command: no desync.
 */
final class RedisStore implements Store {
    private static final Set<String> BUSY = Set.of("LOADING", "BUSY", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN");
    private static final RedisCodec<String, byte[]> CODEC = RedisCodec.of(StringCodec.ASCII, ByteArrayCodec.INSTANCE);
    /** How often a first connection is tried again while Redis has never been reached. */
    private static final long RETRY_MS = 100;
    private final RedisClient client;
    private final RedisURI uri;
    private final ClientResources resources;
    /** null until the first connection is made; from then on Lettuce reconnects it by itself. */
    private volatile RedisAsyncCommands<String, byte[]> commands;

    RedisStore(String host, int port, int timeoutMs) {
        Duration timeout = Duration.ofMillis(timeoutMs);
        ClientResources resources = DefaultClientResources.builder()
                .ioThreadPoolSize(1)          // one connection: one event loop
                .computationThreadPoolSize(1) // timeouts and reconnects only
                // a Redis that comes back is found within 100 ms (the contract allows 2 s)
                .reconnectDelay(Delay.exponential(Duration.ofMillis(5), Duration.ofMillis(100), 2, TimeUnit.MILLISECONDS))
                .build();
        this.resources = resources;
        this.uri = RedisURI.builder().withHost(host).withPort(port).withTimeout(timeout).build();
        this.client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                .protocolVersion(ProtocolVersion.RESP2) // no HELLO on connect
                .autoReconnect(true)
                // not connected: fail at once (503) instead of buffering commands until Redis returns
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                // commands in flight are bounded (Lettuce's default is unbounded): past this Lettuce refuses
                // new ones at once (503), e.g. while Redis is frozen
                .requestQueueSize(Store.MAX_WAITING)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .socketOptions(SocketOptions.builder().connectTimeout(timeout).tcpNoDelay(true).build())
                .build());
    }

    /**
     * Opens the one connection. A Redis that is down at start is no reason not to start: requests answer
     * 503 and the connection is tried again every RETRY_MS until Redis answers (Lettuce reconnects only
     * a connection it once made).
     */
    @Override
    public void warm() {
        connect();
    }

    private void connect() {
        client.connectAsync(CODEC, uri).whenComplete((connection, failure) -> {
            if (failure == null) {
                commands = connection.async();
                return;
            }
            if (commands == null) {
                resources.eventExecutorGroup().schedule(this::connect, RETRY_MS, TimeUnit.MILLISECONDS);
            }
        });
    }

    @Override
    public void get(int id, long deadline, Done done) {
        if (Store.remainingMs(deadline) <= 0) {
            done.done(null, new Unavailable("redis: no time left", null));
            return;
        }
        RedisAsyncCommands<String, byte[]> commands = this.commands;
        if (commands == null) {
            done.done(null, new Unavailable("redis: not connected yet", null));
            return;
        }
        commands.get("greeting:" + id).whenComplete((value, failure) ->
                done.done(value, failure == null ? null : classify(failure)));
    }

    /**
     * An error reply (e.g. ERR, NOPERM) is Redis answering: 500, unless it is a busy reply. Not connected,
     * timed out, queue full, busy: 503.
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

    /**
     * Redis's busy replies (CONTRACT.md, "Unavailable, busy, or an error"): the server is up but says it
     * cannot serve now (loading its dataset, running a script, its primary or cluster down). Unavailability:
     * 503. Lettuce turns every error reply, these included, into a RedisCommandExecutionException
     * (LOADING and BUSY into its subclasses), whose message is the reply's text.
     */
    static boolean busy(String reply) {
        if (reply == null) return false;
        int space = reply.indexOf(' ');
        return BUSY.contains(space < 0 ? reply : reply.substring(0, space));
    }
}
