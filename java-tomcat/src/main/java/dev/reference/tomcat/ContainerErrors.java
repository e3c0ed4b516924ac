package dev.reference.tomcat;

import java.io.IOException;

import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.boot.webmvc.error.ErrorController;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.RequestMapping;

/**
 * Replaces Spring Boot's whitelabel error page. Errors raised outside Spring MVC's handler chain
 * (Tomcat's own sendError, a filter failing) are forwarded by the container to /error; they get the
 * contract's bodies from {@link ErrorReplies}. Requested directly, /error is an unknown path: 404.
 */
@Controller
class ContainerErrors implements ErrorController {

    @RequestMapping("/error")
    void error(HttpServletRequest request, HttpServletResponse response) throws IOException {
        Object status = request.getAttribute(RequestDispatcher.ERROR_STATUS_CODE);
        ErrorReplies.send(response, status instanceof Integer code ? code : 404);
    }
}
