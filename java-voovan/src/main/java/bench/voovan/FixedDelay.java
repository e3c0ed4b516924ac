package bench.voovan;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.LockSupport;

/**
 * The timer of /sleep: runs each task a fixed delay after it was added, on one daemon thread.
 *
 * Every task has the same delay, so the order of adding is the order of running: a lock-free FIFO
 * queue, where a ScheduledThreadPoolExecutor would keep a heap (a lock and an O(log n) insertion per
 * request). Nothing wakes the thread early: with the queue empty it parks one delay (anything added
 * meanwhile is due later than that), otherwise until the oldest task is due.
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
