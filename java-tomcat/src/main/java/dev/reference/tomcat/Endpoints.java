package dev.reference.tomcat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
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

    private final RedisGreetings redis;
    private final MysqlGreetings mysql;
    private final MemcacheGreetings memcache;

    Endpoints(RedisGreetings redis, MysqlGreetings mysql, MemcacheGreetings memcache) {
        this.redis = redis;
        this.mysql = mysql;
        this.memcache = memcache;
    }

    @GetMapping("/hello")
    void hello(HttpServletResponse response) throws IOException {
        Replies.send(response, 200, Replies.TEXT, HELLO);
    }

    /**
     * {@code Thread.sleep} parks the request's virtual thread: its carrier serves other requests
     * meanwhile, and the response is written when it wakes. (What the Servlet-async and Spring-async
     * variants measured: NOTES.md, the /sleep modes.)
     */
    @GetMapping("/sleep")
    void sleep(HttpServletResponse response) throws IOException, InterruptedException {
        Thread.sleep(10);
        Replies.send(response, 200, Replies.TEXT, SLEPT);
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
