package dev.reference.tomcat;

import org.springframework.boot.data.redis.autoconfigure.DataRedisProperties;
import org.springframework.boot.data.redis.autoconfigure.JedisClientConfigurationBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import redis.clients.jedis.ClientSetInfoConfig;
import redis.clients.jedis.JedisPoolConfig;

/**
 * Boot builds the Jedis connection factory from {@code spring.data.redis.*}; this adds what those
 * properties do not cover. The pool's size and wait are Boot's properties, but not commons-pool's
 * fairness, which this stack wants: without it a
 * connection given back can go to a request that has just arrived instead of one that has waited
 * most of its budget (at 1,024 connections on 16, waits spread past the budget: 503s).
 */
@Configuration(proxyBeanMethods = false)
class RedisConfig {

    /**
     * The pool config Boot would build from {@code spring.data.redis.jedis.pool.*}, with fairness on
     * and the idle PINGs off (JedisPoolConfig tests idle connections every 30 s).
     */
    @Bean
    JedisClientConfigurationBuilderCustomizer fairRedisPool(DataRedisProperties properties) {
        DataRedisProperties.Pool pool = properties.getJedis().getPool();
        JedisPoolConfig config = new JedisPoolConfig();
        config.setMaxTotal(pool.getMaxActive());
        config.setMaxIdle(pool.getMaxIdle());
        config.setMinIdle(pool.getMinIdle());
        config.setMaxWait(pool.getMaxWait());
        config.setTestWhileIdle(false);
        config.setJmxEnabled(false);
        // Workaround: commons-pool fairness, which Boot's pool properties do not cover (README, Workarounds)
        config.setFairness(true);
        return builder -> {
            builder.usePooling().poolConfig(config);
            // No CLIENT SETINFO round trips on connect: with them, a connection opened to a frozen Redis
            // (one replacing a connection that failed) waits out a read timeout before its first GET.
            builder.customizeClientConfig(client -> client.clientSetInfoConfig(ClientSetInfoConfig.DISABLED));
        };
    }
}
