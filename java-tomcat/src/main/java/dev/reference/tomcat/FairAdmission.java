package dev.reference.tomcat;

import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * First come, first served in front of a connection pool with as many connections as permits.
 *
 * <p>HikariCP does not hand out connections in arrival order, and has no setting for it (commons-pool,
 * under Redis, has: RedisConfig): a returned connection is up for grabs, and a request that has just
 * arrived can take it ahead of one that has waited most of its budget. With 1024 requests on 16 connections the waits spread from a 180 ms
 * median to over 1 s (27 × 503 on /mysql in one run; NOTES.md, the fair turn). A fair semaphore queues the
 * requests in arrival order, so every one waits about the same and the pool never has a waiter of
 * its own unless a connection is being replaced.
 */
final class FairAdmission {

    private final Semaphore permits;

    FairAdmission(int connections) {
        // Workaround: HikariCP is not first come, first served (README, Workarounds)
        this.permits = new Semaphore(connections, true);
    }

    /** Runs {@code use} once it is this request's turn; a 503 when the deadline passes first. */
    <T> T inTurn(Deadline deadline, Supplier<T> use) {
        boolean admitted;
        try {
            admitted = permits.tryAcquire(deadline.remainingMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ContractError.unavailable(e);
        }
        if (!admitted) {
            throw ContractError.unavailable(new TimeoutException("no connection free within the backend timeout"));
        }
        try {
            return use.get();
        } finally {
            permits.release();
        }
    }
}
