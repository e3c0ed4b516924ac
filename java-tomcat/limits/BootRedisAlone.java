import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import jakarta.servlet.http.HttpServletResponse;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.ConnectionPoolConfig;
import redis.clients.jedis.DefaultJedisClientConfig;
import redis.clients.jedis.RedisClient;

/**
 * The smallest Spring Boot program that answers {@code GET /redis?id=n} the way this stack does: Boot's
 * embedded Tomcat with virtual threads (spring.threads.virtual.enabled), one {@code @GetMapping}, Jedis's
 * RedisClient with a pool of 16 configured as RedisGreetings configured it before the stack moved to Spring Data
 * Redis (the program is the evidence of its NOTES section; Jedis 8), {@code GET greeting:<id>}, and the
 * greeting written by Boot's Jackson converter; and {@code GET /hello} written as the stack writes it, so
 * that the program has a bound of its own, {@code 1 / (1/hello + 1/ceiling)}. Without what the contract
 * adds: no fair turn, no deadline, no error mapping, no valves; no MariaDB or memcached client started.
 * Served beside the stack under the same load, what it reaches is what Spring MVC on Tomcat plus Jedis
 * cost here (README, Limits). Build and run: README, Limits.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration(excludeName = {
        "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration",
        "org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration"})
public class BootRedisAlone {

    public static void main(String[] args) {
        SpringApplication app = new SpringApplication(BootRedisAlone.class);
        app.setDefaultProperties(java.util.Map.of(
                "server.address", env("HOST", "127.0.0.1"),
                "server.port", env("PORT", null),
                "spring.threads.virtual.enabled", "true",
                "server.tomcat.max-keep-alive-requests", "-1", // as the stack: no close every 100 requests
                "spring.main.banner-mode", "off"));
        app.run(args);
    }

    @Bean(destroyMethod = "close")
    RedisClient redisClient() {
        int timeout = Integer.parseInt(env("BACKEND_TIMEOUT_MS", null));
        int size = 16;
        ConnectionPoolConfig pool = new ConnectionPoolConfig();
        pool.setMaxTotal(size);
        pool.setMaxIdle(size);
        pool.setMaxWait(Duration.ofMillis(timeout));
        pool.setTestOnBorrow(false);
        pool.setTestWhileIdle(false);
        pool.setTimeBetweenEvictionRuns(Duration.ofMillis(-1));
        pool.setJmxEnabled(false);
        return RedisClient.builder()
                .hostAndPort(env("REDIS_HOST", null), Integer.parseInt(env("REDIS_PORT", null)))
                .clientConfig(DefaultJedisClientConfig.builder()
                        .connectionTimeoutMillis(timeout).socketTimeoutMillis(timeout)
                        .clientSetInfoConfig(ClientSetInfoConfig.DISABLED).serverDefaultProtocol().build())
                .poolConfig(pool)
                .build();
    }

    public record Greeting(int id, String message) {}

    private static final byte[] HELLO = "Hello, World!".getBytes(StandardCharsets.US_ASCII);

    /** Registered as a member class of this configuration (no component scan). */
    @RestController
    public static class Greetings {
        private final RedisClient redis;

        Greetings(RedisClient redis) {
            this.redis = redis;
        }

        @GetMapping("/hello")
        public void hello(HttpServletResponse response) throws IOException {
            response.setStatus(200);
            response.setContentType("text/plain; charset=utf-8");
            response.getOutputStream().write(HELLO);
        }

        @GetMapping("/redis")
        public Greeting redis(@RequestParam("id") int id) {
            byte[] message = redis.get(("greeting:" + id).getBytes(StandardCharsets.US_ASCII));
            return new Greeting(id, new String(message, StandardCharsets.UTF_8));
        }
    }

    private static String env(String name, String fallback) {
        String value = System.getenv(name);
        if (value != null && !value.isEmpty()) return value;
        if (fallback == null) throw new IllegalStateException(name + " is not set");
        return fallback;
    }
}
