package dev.reference.tomcat;

import org.apache.catalina.Container;
import org.apache.catalina.Pipeline;
import org.apache.catalina.Valve;
import org.apache.catalina.core.StandardHost;
import org.apache.catalina.valves.ErrorReportValve;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** What application.properties cannot say about the embedded Tomcat. */
@Configuration(proxyBeanMethods = false)
class TomcatConfig {

    @Bean
    WebServerFactoryCustomizer<TomcatServletWebServerFactory> contractTomcat(
            @Value("${tomcat.socket.buffer-pool}") int bufferPool) {
        return factory -> {
            // The NIO connector with connectionTimeout (HEAD_TIMEOUT_MS) bounding the whole request
            // head from its first byte, not only the silence between two reads, and keepAliveTimeout
            // (IDLE_TIMEOUT_MS) as the write timeout instead of connectionTimeout (ContractTimeoutsProtocol).
            factory.setProtocol(ContractTimeoutsProtocol.class.getName());
            factory.addContextValves(new ContentTypeValve());
            // TRACE is refused by the connector by default, before routing, with a bare 405 and
            // Tomcat's own Allow list. Let it through to Spring MVC (spring.mvc.dispatch-trace-request)
            // so it gets the contract's routing: 404 on unknown paths, 405 with Allow: GET, HEAD.
            // Workaround: TRACE let through to Spring MVC's routing (README, Workarounds)
            factory.addConnectorCustomizers(connector -> connector.setAllowTrace(true));
            // The NIO connector's cache of closed connections' channels (NioChannel: the socket and
            // its 8 KiB read and 8 KiB write buffers), which Boot has no property for. Tomcat's
            // default (-2) sizes it from the heap and disables it below a 2 GiB maximum, so every new
            // connection allocates its buffers anew (README, Tuning, Tomcat's channel cache).
            // Workaround: socket.bufferPool, which Boot has no property for (README, Workarounds)
            factory.addConnectorCustomizers(connector -> {
                if (!connector.setProperty("socket.bufferPool", Integer.toString(bufferPool))) {
                    throw new IllegalStateException("the connector refused socket.bufferPool=" + bufferPool);
                }
            });
            // Requests Tomcat refuses before any application code runs are answered by the Host's
            // error report valve: the contract's text/plain bodies and 414/431 (RefusalReportValve)
            // instead of the stock HTML page. Spring Boot adds a stock ErrorReportValve to the Host
            // (server.error.include-stacktrace=never); it is replaced, and the Host is told the class
            // so that it does not add another one when it starts.
            // Workaround: the Host's error report valve replaced by RefusalReportValve (README, Workarounds)
            factory.addContextCustomizers(context -> {
                Container host = context.getParent();
                Pipeline pipeline = host.getPipeline();
                for (Valve valve : pipeline.getValves()) {
                    if (valve instanceof ErrorReportValve) {
                        pipeline.removeValve(valve);
                    }
                }
                pipeline.addValve(new RefusalReportValve());
                if (host instanceof StandardHost standardHost) {
                    standardHost.setErrorReportValveClass(RefusalReportValve.class.getName());
                }
            });
        };
    }
}
