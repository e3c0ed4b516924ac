package bench.voovan.backend;

import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;

/** A blocking driver: each read on its own (virtual) thread from {@code executor}, at most MAX_WAITING at once. */
abstract class Blocking implements Backend {
    private final Executor executor;
    private final Semaphore waiting = new Semaphore(MAX_WAITING);

    Blocking(Executor executor) {
        this.executor = executor;
    }

    /** The blocking read: returns the message (null: not there) or throws (Unavailable: 503). */
    abstract byte[] read(int id, long deadline) throws Exception;

    @Override
    public final void get(int id, long deadline, Done done) {
        if (!waiting.tryAcquire()) {
            done.done(null, new Unavailable(getClass().getSimpleName() + ": " + MAX_WAITING + " reads waiting", null));
            return;
        }
        executor.execute(() -> {
            byte[] message;
            try {
                message = read(id, deadline);
            } catch (Throwable t) {
                waiting.release();
                done.done(null, t);
                return;
            }
            waiting.release();
            done.done(message, null);
        });
    }
}
