package dev.reference.tomcat;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * Starts a connection pool only once its server accepts TCP connections, so that a pool started
 * while MariaDB is down does not sit in HikariCP's reconnect backoff (it doubles up to a fixed 5 s,
 * with no setting): the contract wants the first 200 within 2 s of MariaDB's return. Reachable at
 * start: the pool starts at once, as without the gate. Otherwise a virtual thread tries a plain TCP
 * connect every {@code intervalMillis} and starts the pool on the first one accepted; until then
 * {@link #started()} is false and the caller answers 503 without touching the pool. Later outages
 * are the pool's own business.
 */
final class PoolStartGate {

    private final String host;
    private final int port;
    private final int intervalMillis;
    private final Runnable startPool;
    private volatile boolean started;

    PoolStartGate(String host, int port, int intervalMillis, Runnable startPool) {
        this.host = host;
        this.port = port;
        this.intervalMillis = intervalMillis;
        this.startPool = startPool;
    }

    /** Starts the pool now if the server is reachable, else once it is (on a virtual thread). */
    void open() {
        if (reachable()) {
            start();
            return;
        }
        Thread.ofVirtual().name("pool-start-gate").start(() -> {
            try {
                while (!reachable()) {
                    Thread.sleep(intervalMillis);
                }
                start();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /** Whether the pool has been started; before that its callers answer 503 at once. */
    boolean started() {
        return started;
    }

    private void start() {
        startPool.run();
        started = true;
    }

    private boolean reachable() {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), intervalMillis);
            return true;
        } catch (IOException e) { // refused, unreachable, timed out, or the name does not resolve
            return false;
        }
    }
}
