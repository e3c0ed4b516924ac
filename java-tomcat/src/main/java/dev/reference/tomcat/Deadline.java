package dev.reference.tomcat;

/**
 * BACKEND_TIMEOUT_MS as one budget for a whole backend operation: waiting for a pooled
 * connection, then the round trip. The round trip gets only what the pool wait left over, so the
 * 503 always comes within the budget however the time was spent.
 */
record Deadline(long atNanos) {

    static Deadline in(long millis) {
        return new Deadline(System.nanoTime() + millis * 1_000_000L);
    }

    /** Milliseconds left, at least 1; a spent budget is a 503. */
    int remainingMillis() {
        long left = (atNanos - System.nanoTime()) / 1_000_000L;
        if (left <= 0) {
            throw ContractError.UNAVAILABLE;
        }
        return (int) Math.min(left, Integer.MAX_VALUE);
    }
}
