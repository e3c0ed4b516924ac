package dev.reference.tomcat;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Runs tasks a fixed delay after they were added, on one thread that wakes at most once a
 * millisecond and then runs every task that is due.
 *
 * <p>Why not a {@code ScheduledThreadPoolExecutor}: at 10,000 /sleep requests a second its thread
 * parks until the next deadline, 100 µs away, and is woken for nearly every task; on a one-core
 * server each of those wake-ups is a context switch away from the thread serving requests (the
 * profile in NOTES.md, SleepTimer). Here a task may run up to a tick after its
 * deadline, never before it. Every task has the same delay, so the order of adding is the order of
 * deadlines and a lock-free FIFO replaces the executor's locked heap.
 */
final class SleepTimer {
    private static final long TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private record Due(long at, Runnable task) {}

    private final long delayNanos;
    private final ConcurrentLinkedQueue<Due> queue = new ConcurrentLinkedQueue<>();

    SleepTimer(String threadName, long delay, TimeUnit unit) {
        this.delayNanos = unit.toNanos(delay);
        Thread.ofPlatform().name(threadName).daemon().start(this::run);
    }

    /** {@code task} runs on the timer's thread: it must be short and must not block. */
    void add(Runnable task) {
        queue.offer(new Due(System.nanoTime() + delayNanos, task));
    }

    private void run() {
        while (true) {
            long now = System.nanoTime();
            Due head;
            while ((head = queue.peek()) != null && head.at - now <= 0) {
                queue.poll();
                try {
                    head.task.run();
                } catch (RuntimeException | Error e) {
                    Thread.currentThread().getUncaughtExceptionHandler().uncaughtException(Thread.currentThread(), e);
                }
            }
            // Nothing queued: whatever is added next is due a whole delay from now at the earliest.
            long wait = head == null ? delayNanos : head.at - now;
            LockSupport.parkNanos(Math.max(wait, TICK_NANOS));
        }
    }
}
