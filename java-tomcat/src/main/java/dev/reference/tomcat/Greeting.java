package dev.reference.tomcat;

import java.nio.charset.StandardCharsets;

/**
 * The body of a data answer. The handlers return it and Boot's Jackson message converter writes it as
 * {@code {"id":N,"message":"..."}}: Jackson 3 escapes only {@code "} and {@code \} (and control
 * characters, which no message has) and writes every other character as raw UTF-8, the contract's
 * bytes (the features that keep it so are stated in application.properties).
 */
record Greeting(int id, String message) {

    /** The stored UTF-8 message, or the contract's 404 when the backend holds no such id. */
    static Greeting of(int id, byte[] message) {
        if (message == null) {
            throw ContractError.NOT_FOUND;
        }
        return new Greeting(id, new String(message, StandardCharsets.UTF_8));
    }

    /** The stored message, or the contract's 404 when the backend holds no such id. */
    static Greeting of(int id, String message) {
        if (message == null) {
            throw ContractError.NOT_FOUND;
        }
        return new Greeting(id, message);
    }
}
