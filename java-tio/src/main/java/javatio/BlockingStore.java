package javatio;

import java.util.concurrent.Executor;
import java.util.concurrent.Semaphore;

/**
 * A store whose driver blocks (JDBC, xmemcached's get): each read runs on its own virtual thread, so that
 * waiting for the pool or the answer parks that thread and holds no t-io thread (README, "How a request flows").
 */
abstract class BlockingStore implements Store {
    private final Executor executor;
    /** Reads started and not finished: at most {@link Store#MAX_WAITING} (the driver's pool queue is unbounded). */
    private final Semaphore waiting = new Semaphore(MAX_WAITING);

    BlockingStore(Executor executor) {
        this.executor = executor;
    }

    /** The blocking read; same contract as {@link Store#get}, but returns or throws. */
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
