package bench.voovan;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs tasks a fixed delay after they were added, on one thread of its own.
 *
 * Every task of one instance has the same delay, so the order of adding is the order of running: a
 * FIFO queue replaces the heap of a ScheduledThreadPoolExecutor (no lock, no O(log n) insertion and no
 * cancellation per request). Used for the 10 ms of /sleep.
 */
final class FixedDelay {
    private final long delayNanos;
    private final ConcurrentLinkedQueue<Entry> queue = new ConcurrentLinkedQueue<>();

    private record Entry(long due, Runnable task) {}

    FixedDelay(String name, long delayMillis) {
        this.delayNanos = delayMillis * 1_000_000L;
        Thread t = new Thread(this::loop, name);
        t.setDaemon(true);
        t.start();
    }

    void add(Runnable task) {
        queue.offer(new Entry(System.nanoTime() + delayNanos, task));
    }

    private void loop() {
        while (true) {
            Entry head = queue.peek();
            if (head == null) {
                // Anything added from now on is due at least delayNanos later.
                LockSupport.parkNanos(delayNanos);
                continue;
            }
            long wait = head.due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
                continue;
            }
            queue.poll();
            try {
                head.task.run();
            } catch (Throwable e) {
                e.printStackTrace();
            }
        }
    }
}
