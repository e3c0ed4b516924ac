package bench.voovan.backend;

/**
 * One backend read per request. A read is started on Voovan's IO thread and never blocks it; it ends by
 * its deadline (BACKEND_TIMEOUT_MS after the router ran, pool wait included) through the client's own
 * timeout, so a read answered 503 holds no connection after.
 */
public interface Backend {
    /**
     * Reads a backend has started and not finished; one more is refused at once (503). Above the 1,024
     * connections of the benchmark; it bounds what a frozen backend makes pile up.
     */
    int MAX_WAITING = 4096;

    /** Starts one read; {@code deadline} is the System.nanoTime() by which it must end. */
    void get(int id, long deadline, Done done);

    /** How a read ends: the message bytes (UTF-8; null when the id is not there), or a failure. */
    @FunctionalInterface
    interface Done {
        /** failure: null on success; {@link Unavailable} for 503 (down, refusing, too slow); anything else 500. */
        void done(byte[] message, Throwable failure);
    }

    /** The backend is down, refuses, did not answer in time, or too many reads wait: 503. */
    final class Unavailable extends Exception {
        public Unavailable(String what, Throwable cause) {
            super(what, cause, false, false);
        }
    }

    static long remainingMs(long deadline) {
        return (deadline - System.nanoTime()) / 1_000_000L;
    }
}
