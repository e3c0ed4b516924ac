package dev.reference.tomcat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServletResponse;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/**
 * The one place that writes the contract's error responses: 400, 404, 405 (with
 * {@code Allow: GET, HEAD}), 500 and 503, all {@code text/plain; charset=utf-8} with fixed bodies.
 * Spring MVC hands it what its routing throws (no handler for the path, a method the path does not
 * take) and what the handlers throw; {@link ContainerErrors} sends the container's own errors here too.
 */
@RestControllerAdvice
class ErrorReplies {

    private static final Logger log = LoggerFactory.getLogger(ErrorReplies.class);

    private static final byte[] BAD_REQUEST = bytes("Bad Request");
    private static final byte[] NOT_FOUND = bytes("Not Found");
    private static final byte[] METHOD_NOT_ALLOWED = bytes("Method Not Allowed");
    private static final byte[] INTERNAL_SERVER_ERROR = bytes("Internal Server Error");
    private static final byte[] SERVICE_UNAVAILABLE = bytes("Service Unavailable");

    @ExceptionHandler(ContractError.class)
    void contract(ContractError error, HttpServletResponse response) throws IOException {
        if (error.status == 500) { // a backend's error answer: worth a line (an outage's 503s are not)
            log.warn("{}: {}", error.getMessage(), String.valueOf(error.getCause()));
        } else if (error.getCause() != null && log.isDebugEnabled()) {
            log.debug("{}: {}", error.getMessage(), error.getCause().toString());
        }
        send(response, error.status);
    }

    @ExceptionHandler({NoHandlerFoundException.class, NoResourceFoundException.class})
    void noSuchPath(HttpServletResponse response) throws IOException {
        send(response, 404);
    }

    @ExceptionHandler(HttpRequestMethodNotSupportedException.class)
    void methodNotAllowed(HttpServletResponse response) throws IOException {
        send(response, 405);
    }

    @ExceptionHandler(Exception.class)
    void unexpected(Exception error, HttpServletResponse response) throws IOException {
        log.error("unexpected error, answering 500", error);
        send(response, 500);
    }

    /** Writes the contract's response for {@code status}; anything outside the contract becomes 400 or 500. */
    static void send(HttpServletResponse response, int status) throws IOException {
        byte[] body = switch (status) {
            case 404 -> NOT_FOUND;
            case 405 -> METHOD_NOT_ALLOWED;
            case 503 -> SERVICE_UNAVAILABLE;
            default -> status >= 400 && status < 500 ? BAD_REQUEST : INTERNAL_SERVER_ERROR;
        };
        int contractStatus = body == BAD_REQUEST ? 400 : body == INTERNAL_SERVER_ERROR ? 500 : status;
        if (contractStatus == 405) {
            response.setHeader("Allow", "GET, HEAD");
        }
        Replies.send(response, contractStatus, Replies.TEXT, body);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
