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

/**
 * Redis through Lettuce: one connection, pipelined, shared by every event loop (Lettuce is
 * thread-safe and writes from any thread). Replies are paired with commands by Lettuce's own
 * in-order command stack, timed-out ones included, so a reply arriving late after a freeze is
 * consumed by the command it belongs to: no desync. While disconnected, commands are rejected at
 * once (503) instead of being buffered, and the reconnect delay is capped at 100 ms so that a
 * Redis that comes back is used within the 2 s recovery window.
 */
final class Redis implements Backend {
    private final ClientResources resources;
    private final RedisClient client;
    private final StatefulRedisConnection<String, byte[]> connection;
    private final RedisAsyncCommands<String, byte[]> commands;

    Redis(Config config, int ioThreads) {
        Duration timeout = Duration.ofMillis(config.backendTimeoutMs());
        resources = DefaultClientResources.builder()
                .ioThreadPoolSize(ioThreads)
                .computationThreadPoolSize(1)
                .reconnectDelay(Delay.exponential(Duration.ofMillis(5), Duration.ofMillis(100), 2,
                        java.util.concurrent.TimeUnit.MILLISECONDS))
                .build();
        RedisURI uri = RedisURI.builder().withHost(config.redisHost()).withPort(config.redisPort())
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
        connection = connect(client);
        commands = connection.async();
    }

    /** The first connect is retried for up to 30 s (a busy box or a Redis still starting); then it fails the start. */
    private static StatefulRedisConnection<String, byte[]> connect(RedisClient client) {
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(30);
        while (true) {
            try {
                return client.connect(RedisCodec.of(StringCodec.UTF8, ByteArrayCodec.INSTANCE));
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) throw e;
                try {
                    Thread.sleep(200);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    @Override
    public void get(int id, EventLoop loop, Reply reply) {
        commands.get("greeting:" + id).whenComplete(reply::done);
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
        resources.shutdown(0, 1, java.util.concurrent.TimeUnit.SECONDS);
    }
}
