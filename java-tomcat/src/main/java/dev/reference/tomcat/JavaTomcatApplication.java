package dev.reference.tomcat;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * Spring Boot on embedded Tomcat serving the shared endpoint contract (shared-schema/CONTRACT.md).
 * Every setting comes from application.properties, which reads only the environment; the stack's
 * own ({@code backend.*}) are bound to {@link BackendProperties}.
 */
@SpringBootApplication(proxyBeanMethods = false)
@ConfigurationPropertiesScan
public class JavaTomcatApplication {

    public static void main(String[] args) {
        SpringApplication.run(JavaTomcatApplication.class, args);
    }
}
