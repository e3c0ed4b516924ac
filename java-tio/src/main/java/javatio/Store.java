package javatio;

/** One backend read of greeting {@code id}: started by the handler, answered through {@code done} on some thread. */
interface Store {
    /**
     * Reads a store has started and not finished (waiting for a connection or an answer); a read beyond this
     * is refused at once (503). Above the 1024 connections of the benchmark, so that no benchmark meets it;
     * it bounds what a frozen backend makes pile up, each read for at most BACKEND_TIMEOUT_MS.
     */
    int MAX_WAITING = 4096;

    /** What a read ends with: the message bytes (UTF-8; null when there is no such id), or a failure. */
    @FunctionalInterface
    interface Done {
        /**
         * @param failure null on success; an {@link Unavailable} when the backend is down, refuses or is too
         *                slow (503); anything else is a 500
         */
        void done(byte[] message, Throwable failure);
    }

    /**
     * Starts the read; never blocks the calling (t-io) thread.
     *
     * @param deadline System.nanoTime() by which the answer must be there, pool wait included
     */
    void get(int id, long deadline, Done done);

    /**
     * Open every connection now, so that none is opened (or validated) during requests. A backend that is
     * down does not fail this: reads answer 503 until it is reached.
     */
    void warm();

    static long remainingMs(long deadline) {
        return (deadline - System.nanoTime()) / 1_000_000L;
    }
}
