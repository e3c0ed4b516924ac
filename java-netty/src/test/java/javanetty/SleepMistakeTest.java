package javanetty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** SLEEP_MISTAKE, the benchmark-only knob that makes /sleep block its event loop: how it parses, what each value does. */
class SleepMistakeTest {
    @Test
    void unsetOrEmptyIsNettysTimer() {
        assertFalse(HttpHandler.blocksEventLoop(null));
        assertFalse(HttpHandler.blocksEventLoop(""));
    }

    @Test
    void blockEventLoopBlocks() {
        assertTrue(HttpHandler.blocksEventLoop("block-event-loop"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"1", "true", "timer", "block", "BLOCK-EVENT-LOOP", " block-event-loop", "block-event-loop "})
    void anythingElseIsRefused(String value) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> HttpHandler.blocksEventLoop(value));
        assertTrue(e.getMessage().startsWith("SLEEP_MISTAKE=" + value + ": unknown"), e.getMessage());
    }

    /** The loop's clock frozen: on the timer /sleep answers only once 10 ms pass; blocking, before the read returns. */
    @Test
    void eachValueWaitsItsWay() {
        assertEquals("", sleepAnswer(false, 0));
        assertTrue(sleepAnswer(false, 10).startsWith("HTTP/1.1 200 OK\r\n"));
        long t0 = System.nanoTime();
        String blocked = sleepAnswer(true, 0);
        assertTrue(blocked.startsWith("HTTP/1.1 200 OK\r\n"), blocked);
        assertTrue(System.nanoTime() - t0 >= TimeUnit.MILLISECONDS.toNanos(10), "the loop's thread slept");
    }

    private static String sleepAnswer(boolean blocks, long advanceMs) {
        EmbeddedChannel ch = new EmbeddedChannel();
        ch.freezeTime();
        Main.pipeline(ch, new App(null, null, null, 1000, blocks), new Responses(ch.eventLoop()), 20_000, 75_000);
        ch.writeInbound(Unpooled.copiedBuffer("GET /sleep HTTP/1.1\r\nHost: x\r\n\r\n", StandardCharsets.ISO_8859_1));
        if (advanceMs > 0) {
            ch.advanceTimeBy(advanceMs, TimeUnit.MILLISECONDS);
            ch.runPendingTasks();
        }
        StringBuilder sb = new StringBuilder();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            sb.append(b.toString(StandardCharsets.UTF_8));
            b.release();
        }
        ch.finishAndReleaseAll();
        return sb.toString();
    }
}
