package dev.reference.tomcat;

import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** What application.properties cannot say about the embedded Tomcat. */
@Configuration(proxyBeanMethods = false)
class TomcatConfig {

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> contractTomcat() {
        return factory -> {
            factory.addContextValves(new ContentTypeValve());
            // TRACE is refused by the connector by default, before routing, with a bare 405 and
            // Tomcat's own Allow list. Let it through to Spring MVC (spring.mvc.dispatch-trace-request)
            // so it gets the contract's routing: 404 on unknown paths, 405 with Allow: GET, HEAD.
            factory.addConnectorCustomizers(connector -> connector.setAllowTrace(true));
        };
    }
}
