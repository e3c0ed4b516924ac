package javatio;

/** One backend read: the message bytes (UTF-8) of greeting {@code id}, or null when there is none. */
interface Store {
    /**
     * @param deadline System.nanoTime() by which the answer must be there, pool wait included
     * @throws Unavailable when the backend is down, refuses or is too slow (503)
     * @throws Exception anything else (500)
     */
    byte[] get(int id, long deadline) throws Exception;

    /** Open every pooled connection now, so that no connection is created (or validated) during requests. */
    void warm() throws Exception;

    static long remainingMs(long deadline) {
        return (deadline - System.nanoTime()) / 1_000_000L;
    }
}
