package dev.reference.tomcat;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

/** Which Redis error replies are the server being busy (503) rather than an error (500). */
class RedisBusyTest {

    @ParameterizedTest
    @ValueSource(strings = {"LOADING Redis is loading the dataset in memory", "BUSY Redis is busy running a script",
            "MASTERDOWN Link with MASTER is down", "TRYAGAIN Multiple keys request during rehashing",
            "CLUSTERDOWN The cluster is down", "LOADING"})
    void busyReplies(String reply) {
        assertTrue(RedisGreetings.busy(reply));
    }

    @ParameterizedTest
    @NullSource
    @ValueSource(strings = {"ERR unknown command", "NOPERM this user has no permissions", "WRONGTYPE Operation",
            "", "LOADINGX", "loading Redis is loading", " LOADING"})
    void errorReplies(String reply) {
        assertFalse(RedisGreetings.busy(reply));
    }
}
