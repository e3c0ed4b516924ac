package dev.reference.tomcat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The five endpoints. Spring MVC routes them ({@code @GetMapping} also answers HEAD; paths match
 * exactly and case-sensitively, no trailing slash); everything that is not a 200 is thrown as a
 * {@link ContractError} and written by {@link ErrorReplies}, the one place that knows the error bodies.
 *
 * <p>Handlers run on the Tomcat request thread (a virtual thread: spring.threads.virtual.enabled)
 * and block there: a blocked virtual thread unmounts from its carrier, so no platform thread is held
 * while Redis, MariaDB or memcached answer, or while /sleep waits.
 */
@RestController
class Endpoints {

    private static final byte[] HELLO = "Hello, World!".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SLEPT = "Slept 10 ms".getBytes(StandardCharsets.US_ASCII);
    /** Runs a task 10 ms later on the JDK's one delay-scheduler thread (no pool: the task only writes bytes). */
    private static final Executor AFTER_10_MS = CompletableFuture.delayedExecutor(10, TimeUnit.MILLISECONDS, Runnable::run);

    private final RedisGreetings redis;
    private final MysqlGreetings mysql;
    private final MemcacheGreetings memcache;

    private final boolean sleepOnTimer;

    Endpoints(RedisGreetings redis, MysqlGreetings mysql, MemcacheGreetings memcache,
              @Value("${contract.sleep}") String sleep) {
        this.sleepOnTimer = switch (sleep) {
            case "servlet-async" -> true;
            case "virtual-thread" -> false;
            default -> throw new IllegalArgumentException("contract.sleep: virtual-thread or servlet-async, not " + sleep);
        };
        this.redis = redis;
        this.mysql = mysql;
        this.memcache = memcache;
    }

    @GetMapping("/hello")
    void hello(HttpServletResponse response) throws IOException {
        Replies.send(response, 200, Replies.TEXT, HELLO);
    }

    /**
     * contract.sleep=virtual-thread: {@code Thread.sleep} parks the request's virtual thread (its
     * carrier serves others meanwhile) and the response is written when it wakes.
     * contract.sleep=servlet-async: the request goes asynchronous (Spring MVC's CompletableFuture
     * support), no thread waits, a timer writes the body 10 ms later and Spring's async dispatch
     * finishes the response (through ContentTypeValve, like every other response).
     */
    @GetMapping("/sleep")
    CompletableFuture<Void> sleep(HttpServletResponse response) throws IOException, InterruptedException {
        if (sleepOnTimer) {
            return CompletableFuture.runAsync(() -> {
                try {
                    Replies.send(response, 200, Replies.TEXT, SLEPT);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }, AFTER_10_MS);
        }
        Thread.sleep(10);
        Replies.send(response, 200, Replies.TEXT, SLEPT);
        return null; // answered synchronously: Spring treats a null future as a handled request
    }

    @GetMapping("/redis")
    void redis(HttpServletRequest request, HttpServletResponse response) throws IOException {
        int id = IdParameter.parse(request.getQueryString());
        Replies.greeting(response, id, redis.message(id));
    }

    @GetMapping("/mysql")
    void mysql(HttpServletRequest request, HttpServletResponse response) throws IOException {
        int id = IdParameter.parse(request.getQueryString());
        Replies.greeting(response, id, mysql.message(id));
    }

    @GetMapping("/memcache")
    void memcache(HttpServletRequest request, HttpServletResponse response) throws IOException {
        int id = IdParameter.parse(request.getQueryString());
        Replies.greeting(response, id, memcache.message(id));
    }
}
