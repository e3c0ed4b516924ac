package javanetty;

import io.netty.channel.EventLoop;

/** One read of greeting N from one backend. */
interface Backend {
    /** Call on {@code loop} (the connection's event loop); {@code reply} may be called on any thread. */
    void get(int id, EventLoop loop, Reply reply);

    void close();

    interface Reply {
        /** message: the stored UTF-8 bytes, or null when the backend holds no such row; error: non-null on failure. */
        void done(byte[] message, Throwable error);

        /**
         * True once the request has been answered anyway (503 on the deadline, or the client is
         * gone): a client that queues work (the MySQL pool) can then skip it. Any thread.
         */
        default boolean abandoned() {
            return false;
        }
    }
}
