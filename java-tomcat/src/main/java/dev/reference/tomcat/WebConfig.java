package dev.reference.tomcat;

import java.util.Set;

import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.ContentNegotiationConfigurer;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

@Configuration(proxyBeanMethods = false)
class WebConfig implements WebMvcConfigurer {

    /**
     * The contract has one representation per endpoint, whatever the client's {@code Accept} says:
     * Spring MVC would otherwise refuse a {@link Greeting} to a client that does not accept JSON
     * ({@code HttpMediaTypeNotAcceptableException}, which {@link ErrorReplies} would turn into a 500).
     */
    @Override
    public void configureContentNegotiation(ContentNegotiationConfigurer configurer) {
        // Workaround: Accept ignored, a Greeting is always JSON (README, Workarounds)
        configurer.ignoreAcceptHeader(true).defaultContentType(MediaType.APPLICATION_JSON);
    }

    /**
     * Spring MVC answers OPTIONS on a known path itself (200 with an Allow header) instead of
     * failing the method match; the contract wants 405 for every method but GET and HEAD. Only
     * OPTIONS can reach a handler with another method, so this costs one string compare per request.
     */
    @Override
    public void addInterceptors(InterceptorRegistry registry) {
        // Workaround: OPTIONS on a known path is a 405, not Spring's own answer (README, Workarounds)
        registry.addInterceptor(new HandlerInterceptor() {
            @Override
            public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
                    throws HttpRequestMethodNotSupportedException {
                String method = request.getMethod();
                if (request.getDispatcherType() == DispatcherType.REQUEST
                        && !"GET".equals(method) && !"HEAD".equals(method)) {
                    throw new HttpRequestMethodNotSupportedException(method, Set.of("GET", "HEAD"));
                }
                return true;
            }
        });
    }
}
