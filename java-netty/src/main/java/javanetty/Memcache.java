package javanetty;

import io.netty.channel.EventLoop;
import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.exception.MemcachedClientException;
import net.rubyeye.xmemcached.exception.MemcachedException;
import net.rubyeye.xmemcached.exception.MemcachedServerException;
import net.rubyeye.xmemcached.transcoders.CachedData;
import net.rubyeye.xmemcached.transcoders.CompressionMode;
import net.rubyeye.xmemcached.transcoders.Transcoder;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;

/**
 * memcached through xmemcached, as the other JVM stacks: NIO, one multiplexed connection (its default),
 * replies paired with commands in order, a timed-out command swallowing its own late reply. Its get
 * blocks the caller until the reply or the op timeout, so each read runs on a virtual thread, never on
 * an event loop, and the reply is handed to the connection's loop like Redis's and MariaDB's.
 */
final class Memcache implements Backend {
    private final MemcachedClient client;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final int timeoutMs;

    Memcache(Config config) throws Exception {
        timeoutMs = config.backendTimeoutMs();
        XMemcachedClientBuilder b = new XMemcachedClientBuilder(
                List.of(new InetSocketAddress(config.memcacheHost(), config.memcachePort())));
        b.setConnectTimeout(timeoutMs);
        b.setOpTimeout(timeoutMs);
        b.setEnableHealSession(true);
        b.setHealSessionInterval(100); // reconnect 100 ms after a lost connection (default 2 s)
        b.setFailureMode(false);
        client = b.build();
        client.setOptimizeGet(false); // one get per request, never merged into a multi-get
    }

    @Override
    public void get(int id, EventLoop loop, Reply reply) {
        threads.execute(() -> {
            byte[] v;
            try {
                v = client.get("greeting:" + id, timeoutMs, RAW);
            } catch (TimeoutException e) {
                reply.done(null, new Failures.Unavailable("memcached: timeout"));
                return;
            } catch (InterruptedException e) {
                reply.done(null, new Failures.Unavailable("memcached: interrupted"));
                return;
            } catch (MemcachedServerException | MemcachedClientException e) {
                reply.done(null, e);
                return;
            } catch (MemcachedException e) {
                reply.done(null, new Failures.Unavailable("memcached: " + e.getMessage()));
                return;
            } catch (RuntimeException e) {
                reply.done(null, e);
                return;
            }
            reply.done(v, null);
        });
    }

    @Override
    public void close() {
        try {
            client.shutdown();
        } catch (Exception ignored) {
        }
        threads.shutdown();
    }

    /** The stored bytes as they are (flags 0, UTF-8 text). */
    private static final Transcoder<byte[]> RAW = new Transcoder<>() {
        @Override public CachedData encode(byte[] o) { return new CachedData(0, o); }
        @Override public byte[] decode(CachedData d) { return d.getData(); }
        @Override public void setPrimitiveAsString(boolean b) {}
        @Override public void setPackZeros(boolean b) {}
        @Override public void setCompressionThreshold(int t) {}
        @Override public boolean isPrimitiveAsString() { return false; }
        @Override public boolean isPackZeros() { return false; }
        @Override public void setCompressionMode(CompressionMode m) {}
    };
}
