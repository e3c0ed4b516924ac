package dev.reference.tomcat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The five endpoints. Spring MVC routes them ({@code @GetMapping} also answers HEAD; paths match
 * exactly and case-sensitively, no trailing slash); everything that is not a 200 is thrown as a
 * {@link ContractError} and written by {@link ErrorReplies}, the one place that knows the error bodies.
 * The data endpoints return a {@link Greeting}, which Boot's Jackson message converter writes.
 *
 * <p>Handlers run on the Tomcat request thread (a virtual thread: spring.threads.virtual.enabled)
 * and block there: a blocked virtual thread unmounts from its carrier, so no platform thread is held
 * while Redis, MariaDB or memcached answer, or while /sleep waits.
 */
@RestController
class Endpoints {

    private static final byte[] HELLO = "Hello, World!".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SLEPT = "Slept 10 ms".getBytes(StandardCharsets.US_ASCII);
    /** Runs a Runnable 10 ms later on the JDK's one delay-scheduler thread (no pool: the task only writes bytes). */
    private static final Executor AFTER_10_MS = CompletableFuture.delayedExecutor(10, TimeUnit.MILLISECONDS, Runnable::run);
    /** One timer thread for servlet-async: its tasks only write 11 bytes and complete the request. */
    private static final SleepTimer TIMER = new SleepTimer("sleep-timer", 10, TimeUnit.MILLISECONDS);

    /** How /sleep waits: application.properties, contract.sleep (README, Tuning, has the measurements). */
    enum SleepMode { VIRTUAL_THREAD, SERVLET_ASYNC, SPRING_ASYNC }

    private final RedisGreetings redis;
    private final MysqlGreetings mysql;
    private final MemcacheGreetings memcache;

    private final SleepMode sleepMode;

    Endpoints(RedisGreetings redis, MysqlGreetings mysql, MemcacheGreetings memcache,
              @Value("${contract.sleep}") String sleep) {
        this.sleepMode = switch (sleep) {
            case "virtual-thread" -> SleepMode.VIRTUAL_THREAD;
            case "servlet-async" -> SleepMode.SERVLET_ASYNC;
            case "spring-async" -> SleepMode.SPRING_ASYNC;
            default -> throw new IllegalArgumentException(
                    "contract.sleep: virtual-thread, servlet-async or spring-async, not " + sleep);
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
     * contract.sleep=servlet-async: the request goes asynchronous through the plain Servlet API
     * ({@code startAsync}), no thread waits, and a timer task writes the body 10 ms later and
     * completes it. Status and type are set before, so {@link ContentTypeValve} fixes the type's
     * spelling when this handler returns; Tomcat sets Content-Length when the request completes.
     * contract.sleep=spring-async: the same through Spring MVC's CompletableFuture support, whose
     * async dispatch runs the filters and the DispatcherServlet a second time for each request.
     */
    @GetMapping("/sleep")
    CompletableFuture<Void> sleep(HttpServletRequest request, HttpServletResponse response)
            throws IOException, InterruptedException {
        switch (sleepMode) {
            case VIRTUAL_THREAD -> {
                Thread.sleep(10);
                Replies.send(response, 200, Replies.TEXT, SLEPT);
            }
            case SERVLET_ASYNC -> {
                // Workaround: plain Servlet async, Spring MVC's would dispatch twice (README, Workarounds)
                response.setStatus(200);
                response.setContentType(Replies.TEXT);
                AsyncContext async = request.startAsync();
                TIMER.add(() -> {
                    try {
                        response.getOutputStream().write(SLEPT);
                    } catch (IOException e) {
                        // the client has gone: nothing to answer, the request is still completed
                    } finally {
                        async.complete();
                    }
                });
            }
            case SPRING_ASYNC -> {
                return CompletableFuture.runAsync(() -> {
                    try {
                        Replies.send(response, 200, Replies.TEXT, SLEPT);
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    }
                }, AFTER_10_MS);
            }
        }
        return null; // no future: Spring MVC treats the request as handled (and did not start async itself)
    }

    @GetMapping("/redis")
    Greeting redis(HttpServletRequest request) {
        int id = IdParameter.parse(request.getQueryString());
        return Greeting.of(id, redis.message(id));
    }

    @GetMapping("/mysql")
    Greeting mysql(HttpServletRequest request) {
        int id = IdParameter.parse(request.getQueryString());
        return Greeting.of(id, mysql.message(id));
    }

    @GetMapping("/memcache")
    Greeting memcache(HttpServletRequest request) {
        int id = IdParameter.parse(request.getQueryString());
        return Greeting.of(id, memcache.message(id));
    }
}
