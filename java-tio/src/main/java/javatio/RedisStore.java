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
import io.lettuce.core.api.StatefulRedisConnection;
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
    private final RedisAsyncCommands<String, byte[]> commands;

    RedisStore(String host, int port, int timeoutMs) {
        Duration timeout = Duration.ofMillis(timeoutMs);
        ClientResources resources = DefaultClientResources.builder()
                .ioThreadPoolSize(1)          // one connection: one event loop
                .computationThreadPoolSize(1) // timeouts and reconnects only
                // a Redis that comes back is found within 100 ms (the contract allows 2 s)
                .reconnectDelay(Delay.exponential(Duration.ofMillis(5), Duration.ofMillis(100), 2, TimeUnit.MILLISECONDS))
                .build();
        RedisClient client = RedisClient.create(resources,
                RedisURI.builder().withHost(host).withPort(port).withTimeout(timeout).build());
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
        StatefulRedisConnection<String, byte[]> connection =
                client.connect(RedisCodec.of(StringCodec.ASCII, ByteArrayCodec.INSTANCE));
        this.commands = connection.async();
    }

    @Override
    public void warm() {
        // the one connection is opened by the constructor
    }

    @Override
    public void get(int id, long deadline, Done done) {
        if (Store.remainingMs(deadline) <= 0) {
            done.done(null, new Unavailable("redis: no time left", null));
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
