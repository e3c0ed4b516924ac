package dev.reference.tomcat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.concurrent.TimeoutException;

import jakarta.annotation.PreDestroy;
import net.rubyeye.xmemcached.MemcachedClient;
import net.rubyeye.xmemcached.XMemcachedClientBuilder;
import net.rubyeye.xmemcached.exception.MemcachedClientException;
import net.rubyeye.xmemcached.exception.MemcachedException;
import net.rubyeye.xmemcached.exception.MemcachedServerException;
import net.rubyeye.xmemcached.transcoders.CachedData;
import net.rubyeye.xmemcached.transcoders.CompressionMode;
import net.rubyeye.xmemcached.transcoders.Transcoder;
import org.springframework.stereotype.Component;

/**
 * One memcached {@code get greeting:<id>} per request with xmemcached (NIO, text protocol).
 *
 * <p>xmemcached multiplexes requests over a few connections, so there is no pool to wait for: the
 * whole budget is the operation timeout. A timed-out get stays queued on its connection and its
 * late reply is consumed by that (cancelled) command, in order, so replies cannot shift onto later
 * requests. A lost connection is re-opened by xmemcached's heal thread every
 * {@code backend.memcache.heal-interval-ms} (times the attempt number); meanwhile gets fail at once.
 */
@Component
class MemcacheGreetings {

    private final MemcachedClient client;
    private final long timeoutMillis;

    MemcacheGreetings(BackendProperties backend) throws IOException {
        BackendProperties.Memcache memcache = backend.memcache();
        this.timeoutMillis = backend.timeout().toMillis();
        XMemcachedClientBuilder builder = new XMemcachedClientBuilder(
                List.of(new InetSocketAddress(memcache.host(), memcache.port())));
        builder.setConnectionPoolSize(memcache.connections());
        builder.setConnectTimeout(timeoutMillis);
        builder.setOpTimeout(timeoutMillis);
        builder.setHealSessionInterval(memcache.healInterval().toMillis());
        builder.setFailureMode(false);
        builder.setTranscoder(RawBytes.INSTANCE);
        this.client = builder.build();
        // One get per request, never merged into a multi-get (xmemcached's default merges gets
        // waiting on a connection): an error reply to a merged get fails only its first key's
        // caller, the others wait out the op timeout and become 503s (make verify's "backend
        // error: memcached SERVER_ERROR" case found it).
        // Workaround: xmemcached's merged gets (README, Workarounds)
        this.client.setOptimizeGet(false);
    }

    /** The stored message bytes, or null when the key does not exist. */
    byte[] message(int id) {
        try {
            return client.get("greeting:" + id, timeoutMillis, RawBytes.INSTANCE);
        } catch (MemcachedServerException | MemcachedClientException e) { // an error reply: not an outage
            throw new IllegalStateException("memcached answered with an error", e);
        } catch (TimeoutException | MemcachedException e) { // slow, frozen, or no live connection
            throw ContractError.unavailable(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ContractError.unavailable(e);
        }
    }

    @PreDestroy
    void close() throws IOException {
        client.shutdown();
    }

    /** The value's bytes as stored (flags 0, UTF-8 text): no String decoding, no serialization. */
    enum RawBytes implements Transcoder<byte[]> {
        INSTANCE;

        @Override
        public CachedData encode(byte[] bytes) {
            return new CachedData(0, bytes);
        }

        @Override
        public byte[] decode(CachedData data) {
            return data.getData();
        }

        @Override
        public void setPrimitiveAsString(boolean primitiveAsString) {
        }

        @Override
        public void setPackZeros(boolean packZeros) {
        }

        @Override
        public void setCompressionThreshold(int to) {
        }

        @Override
        public boolean isPrimitiveAsString() {
            return false;
        }

        @Override
        public boolean isPackZeros() {
            return false;
        }

        @Override
        public void setCompressionMode(CompressionMode compressMode) {
        }
    }
}
