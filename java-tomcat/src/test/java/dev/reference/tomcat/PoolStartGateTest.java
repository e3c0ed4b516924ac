package dev.reference.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

/** The pool starts only once its server accepts a TCP connection; before that, /mysql is a 503 without a pool. */
class PoolStartGateTest {

    private static final String HOST = "127.0.0.1";

    @Test
    void reachableAtStartStartsThePoolAtOnce() throws IOException {
        try (ServerSocket server = listen(0)) {
            AtomicInteger starts = new AtomicInteger();
            PoolStartGate gate = new PoolStartGate(HOST, server.getLocalPort(), 100, starts::incrementAndGet);
            gate.open();
            assertTrue(gate.started());
            assertEquals(1, starts.get());
        }
    }

    @Test
    void downAtStartStartsThePoolOnceItListens() throws Exception {
        int port = freePort();
        AtomicInteger starts = new AtomicInteger();
        PoolStartGate gate = new PoolStartGate(HOST, port, 100, starts::incrementAndGet);
        gate.open();
        assertFalse(gate.started());
        Thread.sleep(300); // a few refused probes: still nothing started
        assertFalse(gate.started());
        assertEquals(0, starts.get());
        try (ServerSocket server = listen(port)) {
            long giveUp = System.nanoTime() + Duration.ofSeconds(30).toNanos(); // a hang guard, not a speed limit
            while (!gate.started() && System.nanoTime() < giveUp) {
                Thread.sleep(20);
            }
            assertTrue(gate.started());
            assertEquals(1, starts.get());
        }
    }

    @Test
    void mysqlIsA503WithoutStartingThePoolWhileMariaDbIsDown() throws Exception {
        try (HikariDataSource dataSource = new HikariDataSource()) {
            dataSource.setJdbcUrl("jdbc:mariadb://" + HOST + ":" + freePort() + "/greetings");
            MysqlGreetings mysql = new MysqlGreetings(dataSource, new BackendProperties(Duration.ofSeconds(1), null, new BackendProperties.Mysql(BackendProperties.Mistake.NONE)));
            ContractError error = assertThrows(ContractError.class, () -> mysql.message(1));
            assertEquals(503, error.status);
            assertNull(dataSource.getHikariPoolMXBean()); // Hikari's pool was never started
        }
    }

    private static ServerSocket listen(int port) throws IOException {
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getByName(HOST), port));
        return server;
    }

    /** A loopback port nobody listens on (bound once, then closed). */
    private static int freePort() throws IOException {
        try (ServerSocket server = listen(0)) {
            return server.getLocalPort();
        }
    }
}
