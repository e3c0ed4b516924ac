package dev.reference.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** backend.* as Boot binds it: BACKEND_MYSQL_MISTAKE off unless named, and an unknown value fails the start. */
class BackendPropertiesTest {

    private static BackendProperties bind(String mistake) {
        Map<String, String> props = new HashMap<>(Map.of("backend.timeout", "1000ms",
                "backend.memcache.host", "127.0.0.1", "backend.memcache.port", "11211",
                "backend.memcache.connections", "2", "backend.memcache.heal-interval", "100ms"));
        if (mistake != null) {
            props.put("backend.mysql.mistake", mistake);
        }
        return new Binder(new MapConfigurationPropertySource(props)).bindOrCreate("backend", BackendProperties.class);
    }

    @Test
    void noMistakeUnlessNamed() {
        BackendProperties backend = bind(null);
        assertEquals(Duration.ofSeconds(1), backend.timeout());
        assertEquals(BackendProperties.Mistake.NONE, backend.mysql().mistake());
    }

    @Test
    void connectionPerRequest() {
        assertEquals(BackendProperties.Mistake.CONNECTION_PER_REQUEST, bind("connection-per-request").mysql().mistake());
    }

    @Test
    void unknownMistakeRefused() {
        assertThrows(BindException.class, () -> bind("no-pool"));
    }
}
