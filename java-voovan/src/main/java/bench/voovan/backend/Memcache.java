package bench.voovan.backend;

import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.exception.MemcachedClientException;
import net.rubyeye.xmemcached.exception.MemcachedException;
import net.rubyeye.xmemcached.exception.MemcachedServerException;
import net.rubyeye.xmemcached.transcoders.CachedData;
import net.rubyeye.xmemcached.transcoders.CompressionMode;
import net.rubyeye.xmemcached.transcoders.Transcoder;
import net.rubyeye.xmemcached.utils.AddrUtil;

import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;

/** xmemcached: NIO, its connections multiplexed by every caller; get() waits on a latch for the reply. */
public final class Memcache extends Blocking {
    private final MemcachedClient client;

    public Memcache(String host, int port, int timeoutMs, int connections, Executor executor) throws Exception {
        super(executor);
        XMemcachedClientBuilder b = new XMemcachedClientBuilder(AddrUtil.getAddresses(host + ":" + port));
        b.setConnectionPoolSize(connections);
        b.setConnectTimeout(timeoutMs);
        b.setOpTimeout(timeoutMs);
        b.setHealSessionInterval(100);                    // reconnect fast after an outage (default 2 s)
        b.setEnableHealSession(true);
        b.setFailureMode(false);
        client = b.build();
        client.setEnableHeartBeat(false);
        client.setOptimizeGet(false);                     // one get per request, never merged into a multi-get
        // A get that timed out leaves its connection with a reply pending: close that connection
        // at the first timeout (default: after 1000) so it is never reused; the heal thread reconnects.
        client.setTimeoutExceptionThreshold(1);
    }

    @Override
    byte[] read(int id, long deadline) throws Exception {
        long left = Backend.remainingMs(deadline);
        if (left <= 0) throw new Unavailable("memcache: no time left", null);
        try {
            return client.get("greeting:" + id, left, RAW);
        } catch (TimeoutException e) {
            throw new Unavailable("memcache: timeout", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new Unavailable("memcache: interrupted", e);
        } catch (MemcachedServerException | MemcachedClientException e) {
            throw e; // memcached answered with an error: 500
        } catch (MemcachedException e) {
            throw new Unavailable("memcache: " + e.getMessage(), e); // no connection
        }
    }

    /** The stored bytes as they are (flags 0, UTF-8 text): no decoding to a String and back. */
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
