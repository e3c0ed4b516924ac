package javanetty;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.RedisClient;
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
import io.lettuce.core.resource.Delay;
import io.lettuce.core.resource.DefaultClientResources;
import io.netty.channel.EventLoop;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Redis through Lettuce: one connection, pipelined, shared by every event loop (Lettuce is
 * thread-safe and writes from any thread). Replies are paired with commands by Lettuce's own
 * in-order command stack, timed-out ones included, so a reply arriving late after a freeze is
 * consumed by the command it belongs to: no desync. While disconnected, commands are rejected at
 * once (503) instead of being buffered, and the reconnect delay is capped at 100 ms so that a
 * Redis that comes back is used within the 2 s recovery window. A Redis that is down when the
 * server starts is connected to in the background, every 100 ms, until it answers (503 meanwhile).
 */
final class Redis implements Backend {
    private static final long RETRY_MS = 100;
    private static final Failures.Unavailable NOT_CONNECTED = new Failures.Unavailable("redis: not connected yet");

    private final ClientResources resources;
    private final RedisClient client;
    private final RedisURI uri;
    private volatile StatefulRedisConnection<String, byte[]> connection;
    private volatile RedisAsyncCommands<String, byte[]> commands;
    private volatile boolean closed;

    Redis(Config config, int ioThreads) {
        Duration timeout = Duration.ofMillis(config.backendTimeoutMs());
        resources = DefaultClientResources.builder()
                .ioThreadPoolSize(ioThreads)
                .computationThreadPoolSize(1)
                .reconnectDelay(Delay.exponential(Duration.ofMillis(5), Duration.ofMillis(RETRY_MS), 2,
                        TimeUnit.MILLISECONDS))
                .build();
        uri = RedisURI.builder().withHost(config.redisHost()).withPort(config.redisPort())
                .withTimeout(timeout).build();
        client = RedisClient.create(resources, uri);
        client.setOptions(ClientOptions.builder()
                .protocolVersion(ProtocolVersion.RESP2)
                .autoReconnect(true)
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .requestQueueSize(65_536)
                .timeoutOptions(TimeoutOptions.enabled(timeout))
                .socketOptions(SocketOptions.builder().connectTimeout(timeout).tcpNoDelay(true).build())
                .build());
    }

    /**
     * Connects before the port opens. If Redis is not reachable the server starts anyway and keeps
     * trying in the background; once connected, Lettuce's own auto-reconnect takes over.
     */
    void warm() throws InterruptedException {
        try {
            connected(connectAsync().get());
        } catch (ExecutionException e) {
            System.err.println("java-netty: Redis not reachable (" + e.getCause() + "); starting without it,"
                    + " /redis answers 503 until it is");
            retryLater();
        }
    }

    private CompletableFuture<StatefulRedisConnection<String, byte[]>> connectAsync() {
        return client.connectAsync(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE), uri).toCompletableFuture();
    }

    // Workaround: Lettuce reconnects only a connection that once connected; the first one is retried here (README, Workarounds)
    private void retryLater() {
        if (closed) return;
        resources.eventExecutorGroup().schedule(() -> connectAsync().whenComplete((c, error) -> {
            if (error == null) {
                connected(c);
            } else {
                retryLater();
            }
        }), RETRY_MS, TimeUnit.MILLISECONDS);
    }

    private void connected(StatefulRedisConnection<String, byte[]> c) {
        if (closed) {
            c.closeAsync();
            return;
        }
        connection = c;
        commands = c.async();
    }

    @Override
    public void get(int id, EventLoop loop, Reply reply) {
        RedisAsyncCommands<String, byte[]> c = commands;
        if (c == null) {
            reply.done(null, NOT_CONNECTED);
            return;
        }
        c.get("greeting:" + id).whenComplete(reply::done);
    }

    @Override
    public void close() {
        closed = true;
        StatefulRedisConnection<String, byte[]> c = connection;
        if (c != null) c.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        resources.shutdown(0, 1, TimeUnit.SECONDS);
    }
}
