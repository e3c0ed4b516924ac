package dev.reference.tomcat;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import dev.reference.tomcat.internals.ContentTypeValve;
import dev.reference.tomcat.internals.ContractTimeoutsProtocol;
import dev.reference.tomcat.internals.RefusalReportValve;

/**
 * What application.properties cannot say about the embedded Tomcat. The classes it installs from
 * {@code internals} are the stack's Tomcat workarounds (README, Workarounds).
 */
@Configuration(proxyBeanMethods = false)
class TomcatConfig {

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> contractTomcat(
            @Value("${tomcat.socket.buffer-pool}") int bufferPool) {
        return factory -> {
            // The NIO connector with connectionTimeout (HEAD_TIMEOUT_MS) bounding the whole request
            // head from its first byte, and keepAliveTimeout (IDLE_TIMEOUT_MS) as the write timeout.
            factory.setProtocol(ContractTimeoutsProtocol.class.getName());
            // Content-Type printed as the contract spells it.
            factory.addContextValves(new ContentTypeValve());
            // Requests Tomcat refuses before any application code runs: text/plain bodies, 414/431.
            factory.addContextCustomizers(RefusalReportValve::install);
            // Contract-driven (README, Benchmark-only settings): TRACE reaches Spring
            // MVC's routing (404 / 405 with Allow: GET, HEAD) instead of the connector's own 405.
            factory.addConnectorCustomizers(connector -> connector.setAllowTrace(true));
            // The NIO connector's cache of closed connections' channels (NioChannel: the socket and
            // its 8 KiB read and 8 KiB write buffers), a documented connector attribute Boot has no
            // property for. Tomcat's default (-2) disables it below a 2 GiB maximum heap.
            // Workaround: socket.bufferPool, which Boot has no property for (README, Workarounds)
            factory.addConnectorCustomizers(connector -> {
                if (!connector.setProperty("socket.bufferPool", Integer.toString(bufferPool))) {
                    throw new IllegalStateException("the connector refused socket.bufferPool=" + bufferPool);
                }
            });
        };
    }
}
