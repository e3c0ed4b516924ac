package dev.reference.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;

import org.apache.tomcat.util.buf.MessageBytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.reference.tomcat.internals.RequestValidity;

/** RequestValidity's decision alone, on the parsed values Tomcat hands it (the socket cases: TomcatWorkaroundsTest). */
class RequestValidityTest {

    @ParameterizedTest(name = "{0} after Tomcat's {1}: {2}")
    @CsvSource({
            "HTTP/1.1, 200, 0", "HTTP/1.0, 200, 0",
            // Tomcat's 505 for every other version: kept for a well-formed one, 400 for a malformed one
            "HTTP/2.0, 505, 0", "HTTP/9.9, 505, 0", "HTTP/1.2, 505, 0",
            "HTTP/1, 505, 400", "HTTP/01.01, 505, 400", "HTTP/1.1.1, 505, 400", "HTTP/11, 505, 400", "HTTP/, 505, 400",
            "HTTP/.1, 505, 400", "HTTP/1., 505, 400", "HTTP1.1/, 505, 400",
            // refused by Tomcat already: left as it is
            "HTTP/1.1, 400, 0", "HTTP/1.1, 417, 0"})
    void version(String version, int tomcatStatus, int refusal) {
        assertEquals(refusal, RequestValidity.refusal(bytes("GET"), bytes(version), bytes("verify"), tomcatStatus));
    }

    @ParameterizedTest(name = "Host [{0}]: {1}")
    @CsvSource({"'', 400", "verify, 0", "verify:8080, 0", "'[::1]:8080', 0", "127.0.0.1, 0"})
    void host(String host, int refusal) {
        assertEquals(refusal, RequestValidity.refusal(bytes("GET"), bytes("HTTP/1.1"), bytes(host), 200));
    }

    @Test
    void noHostIsTomcatsToDecide() {
        // HTTP/1.1 without Host is refused by Tomcat before this; HTTP/1.0 without one is served
        assertEquals(0, RequestValidity.refusal(bytes("GET"), bytes("HTTP/1.0"), null, 200));
        assertEquals(0, RequestValidity.refusal(bytes("GET"), bytes("HTTP/1.0"), MessageBytes.newInstance(), 200));
    }

    @Test
    void methodLongerThanTheLimitIs501() {
        String limit = "G".repeat(RequestValidity.MAX_METHOD);
        assertEquals(0, RequestValidity.refusal(bytes(limit), bytes("HTTP/1.1"), bytes("verify"), 200));
        assertEquals(501, RequestValidity.refusal(bytes(limit + "G"), bytes("HTTP/1.1"), bytes("verify"), 200));
        assertEquals(0, RequestValidity.refusal(bytes("PROPFIND"), bytes("HTTP/1.1"), bytes("verify"), 200));
    }

    @Test
    void anEmptyHostIs400WhateverTheMethod() {
        assertEquals(400, RequestValidity.refusal(bytes("G".repeat(40)), bytes("HTTP/1.1"), bytes(""), 200));
    }

    /** As Tomcat's parser leaves them: bytes in its buffer. */
    private static MessageBytes bytes(String value) {
        MessageBytes mb = MessageBytes.newInstance();
        byte[] b = value.getBytes(StandardCharsets.ISO_8859_1);
        mb.setBytes(b, 0, b.length);
        return mb;
    }
}
