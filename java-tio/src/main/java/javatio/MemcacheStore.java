package javatio;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;

import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.exception.MemcachedClientException;
import net.rubyeye.xmemcached.exception.MemcachedException;
import net.rubyeye.xmemcached.exception.MemcachedServerException;
import net.rubyeye.xmemcached.transcoders.CachedData;
import net.rubyeye.xmemcached.transcoders.CompressionMode;
import net.rubyeye.xmemcached.transcoders.Transcoder;

/**
 * xmemcached: NIO, one multiplexed connection (its default); the caller blocks on a latch until the reply
 * (or the op timeout). Replies are matched to commands in order, a timed-out command stays queued
 * and swallows its own late reply, so nothing desyncs after a freeze.
 */
final class MemcacheStore extends BlockingStore {
    private final MemcachedClient client;

    MemcacheStore(String host, int port, int timeoutMs, Executor executor) throws Exception {
        super(executor);
        XMemcachedClientBuilder b = new XMemcachedClientBuilder(List.of(new InetSocketAddress(host, port)));
        b.setConnectTimeout(timeoutMs);
        b.setOpTimeout(timeoutMs);
        b.setEnableHealSession(true);
        b.setHealSessionInterval(100); // reconnect 100 ms after a lost connection (default 2 s)
        b.setFailureMode(false);
        this.client = b.build();
        client.setOptimizeGet(false); // one get per request, never merged into a multi-get
    }

    @Override
    public void warm() {
        // connections are opened by build()
    }

    @Override
    byte[] read(int id, long deadline) throws Exception {
        long left = Store.remainingMs(deadline);
        if (left <= 0) {
            throw new Unavailable("memcache: no time left", null);
        }
        try {
            return client.get("greeting:" + id, left, RAW);
        } catch (TimeoutException e) {
            throw new Unavailable("memcache: timeout", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unavailable("memcache: interrupted", e);
        } catch (MemcachedServerException | MemcachedClientException e) {
            throw e; // 500
        } catch (MemcachedException e) {
            throw new Unavailable("memcache: " + e.getMessage(), e); // no connection
        }
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
