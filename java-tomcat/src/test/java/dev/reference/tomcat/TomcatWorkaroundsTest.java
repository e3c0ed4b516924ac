package dev.reference.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import dev.reference.tomcat.internals.ContentTypeValve;
import dev.reference.tomcat.internals.ContractTimeoutsProtocol;
import dev.reference.tomcat.internals.RefusalReportValve;

/**
 * The Tomcat workarounds of the internals package on a plain embedded Tomcat (no Spring, no backends),
 * installed as TomcatConfig installs them, spoken to over a raw socket: the Content-Type's spelling,
 * 414 and 431 for an oversized head, the head deadline, and request validity (every case of the
 * verifier's validity check: Tomcat's own refusals and RequestValidity's).
 */
class TomcatWorkaroundsTest {

    private static final int HEAD_LIMIT = 8192;
    private static final int HEAD_TIMEOUT_MS = 500;

    @TempDir
    static Path base;
    private static Tomcat tomcat;
    private static int port;

    @BeforeAll
    static void start() throws Exception {
        tomcat = new Tomcat();
        tomcat.setBaseDir(base.toString());
        Connector connector = new Connector(ContractTimeoutsProtocol.class.getName());
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        connector.setProperty("maxHttpRequestHeaderSize", Integer.toString(HEAD_LIMIT));
        connector.setProperty("connectionTimeout", Integer.toString(HEAD_TIMEOUT_MS));
        connector.setProperty("keepAliveTimeout", "5000");
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", base.toString());
        context.getPipeline().addValve(new ContentTypeValve());
        RefusalReportValve.install(context);
        Tomcat.addServlet(context, "hello", new HttpServlet() {
            // Every method, as Spring's DispatcherServlet takes every method (HttpServlet would answer 501 itself).
            @Override
            protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException {
                Replies.send(response, 200, Replies.TEXT, "Hello, World!".getBytes(StandardCharsets.US_ASCII));
            }
        });
        context.addServletMappingDecoded("/", "hello");
        tomcat.start();
        port = connector.getLocalPort();
    }

    @AfterAll
    static void stop() throws Exception {
        tomcat.stop();
        tomcat.destroy();
    }

    @Test
    void contentTypeKeepsTheContractsSpelling() throws IOException {
        String response = exchange("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
        assertTrue(response.startsWith("HTTP/1.1 200 "), response);
        assertTrue(response.contains("\r\nContent-Type: text/plain; charset=utf-8\r\n"), response);
        assertTrue(response.contains("\r\nContent-Length: 13\r\n"), response);
        assertTrue(response.endsWith("\r\n\r\nHello, World!"), response);
    }

    @Test
    void headJustWithinTheLimitIsServed() throws IOException {
        String start = "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: ";
        String end = "\r\n\r\n";
        String head = start + "a".repeat(HEAD_LIMIT - start.length() - end.length()) + end;
        assertEquals(HEAD_LIMIT, head.length());
        assertTrue(exchange(head).startsWith("HTTP/1.1 200 "));
    }

    @Test
    void requestLineOverTheLimitIs414() throws IOException {
        String response = exchange("GET /" + "a".repeat(HEAD_LIMIT + 100) + " HTTP/1.1\r\nHost: x\r\n\r\n");
        assertRefused(response, "414 ", "URI Too Long");
    }

    @Test
    void headerOverTheLimitIs431() throws IOException {
        String response = exchange("GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + "a".repeat(HEAD_LIMIT + 100) + "\r\n\r\n");
        assertRefused(response, "431 ", "Request Header Fields Too Large");
    }

    @Test
    void malformedHeadIsAPlainText400() throws IOException {
        assertRefused(exchange("GET / HTTP/1.1\r\nHost : x\r\n\r\n"), "400 ", "Bad Request");
    }

    /** Stock Tomcat restarts its timeout at every byte; here the head has HEAD_TIMEOUT_MS from its first one. */
    @Test
    void tricklingHeadIsClosedAtTheDeadline() throws Exception {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(100);
            OutputStream out = socket.getOutputStream();
            InputStream in = socket.getInputStream();
            out.write("GET / HTTP/1.1\r\nX-Slow: ".getBytes(StandardCharsets.US_ASCII));
            // Trickle a byte every 100 ms for up to 20 head timeouts: stock Tomcat would keep reading all along.
            for (int i = 0; i < 100; i++) {
                try {
                    out.write('a');
                    out.flush();
                    if (in.read() == -1) {
                        return; // closed, without an answer
                    }
                } catch (SocketTimeoutException e) {
                    continue; // still open, nothing to read: the 100 ms between bytes
                } catch (SocketException e) {
                    return; // reset by the server
                }
            }
            throw new AssertionError("a head trickled for 10 s was never closed (head timeout " + HEAD_TIMEOUT_MS + " ms)");
        }
    }

    /**
     * The verifier's request-validity cases (loadtest/harness/contract/protocol.py): the request head,
     * with {@code \\r\\n} for CRLF and {@code \\xHH} for a byte; the status; served ones add
     * {@code Connection: close} so that the exchange ends. Marked (RV): decided by RequestValidity.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            HTTP/1.1 without Host                  | GET /hello HTTP/1.1\\r\\n                                                   | 400
            two Host lines, the same value         | GET /hello HTTP/1.1\\r\\nHost: verify\\r\\nHost: verify\\r\\n              | 400
            two Host lines, different values       | GET /hello HTTP/1.1\\r\\nHost: verify\\r\\nHost: other\\r\\n               | 400
            Host with userinfo                     | GET /hello HTTP/1.1\\r\\nHost: user@verify\\r\\n                         | 400
            Host with a path                       | GET /hello HTTP/1.1\\r\\nHost: verify/x\\r\\n                            | 400
            Host holding a list                    | 'GET /hello HTTP/1.1\\r\\nHost: verify, other\\r\\n'                     | 400
            (RV) an empty Host                     | GET /hello HTTP/1.1\\r\\nHost: \\r\\n                                    | 400
            (RV) an empty Host in HTTP/1.0         | GET /hello HTTP/1.0\\r\\nHost: \\r\\n                                    | 400
            Host with a port                       | GET /hello HTTP/1.1\\r\\nHost: verify:8080\\r\\n                         | 200
            Host as an IPv6 literal                | GET /hello HTTP/1.1\\r\\nHost: [::1]:8080\\r\\n                          | 200
            Host as an IPv4 address                | GET /hello HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\n                           | 200
            HTTP/1.0 without Host                  | GET /hello HTTP/1.0\\r\\n                                                   | 200
            asterisk-form with GET                 | GET * HTTP/1.1\\r\\nHost: verify\\r\\n                                  | 400
            authority-form with GET                | GET verify:80 HTTP/1.1\\r\\nHost: verify\\r\\n                          | 400
            absolute-form                          | GET http://verify/hello HTTP/1.1\\r\\nHost: verify\\r\\n                | 200
            a raw byte above 0x7F in the target    | GET /hello\\xff HTTP/1.1\\r\\nHost: verify\\r\\n                          | 400
            overlong UTF-8 in the target           | GET /hello/\\xc0\\xaf HTTP/1.1\\r\\nHost: verify\\r\\n                    | 400
            a NUL in the target                    | GET /hel\\x00lo HTTP/1.1\\r\\nHost: verify\\r\\n                          | 400
            a control byte in the target           | GET /hel\\x01lo HTTP/1.1\\r\\nHost: verify\\r\\n                          | 400
            a method that is not a token           | GE{T /hello HTTP/1.1\\r\\nHost: verify\\r\\n                            | 400
            CONNECT                                | CONNECT verify:443 HTTP/1.1\\r\\nHost: verify:443\\r\\n                 | 501
            (RV) a 32-byte method is served        | GGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGG /hello HTTP/1.1\\r\\nHost: verify\\r\\n  | 200
            (RV) a 33-byte method                  | GGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGGG /hello HTTP/1.1\\r\\nHost: verify\\r\\n | 501
            lower-case version                     | GET /hello http/1.1\\r\\nHost: verify\\r\\n                             | 400
            (RV) version without a minor           | GET /hello HTTP/1\\r\\nHost: verify\\r\\n                               | 400
            (RV) version with leading zeros        | GET /hello HTTP/01.01\\r\\nHost: verify\\r\\n                           | 400
            (RV) a version with two dots           | GET /hello HTTP/1.1.1\\r\\nHost: verify\\r\\n                           | 400
            another major version                  | GET /hello HTTP/2.0\\r\\nHost: verify\\r\\n                             | 505
            a field line without a colon           | GET /hello HTTP/1.1\\r\\nHost: verify\\r\\nX-Probe\\r\\n                   | 400
            a NUL in a field value                 | GET /hello HTTP/1.1\\r\\nHost: verify\\r\\nX-Probe: a\\x00b\\r\\n             | 400
            a field name with a byte above 0x7F    | GET /hello HTTP/1.1\\r\\nHost: verify\\r\\nX-Pr\\xf6be: 1\\r\\n              | 400
            """)
    void requestValidity(String name, String head, int status) throws IOException {
        String request = unescape(head);
        if (status == 200) {
            String response = exchange(request + "Connection: close\r\n\r\n");
            assertTrue(response.startsWith("HTTP/1.1 200 ") && response.endsWith("Hello, World!"), response);
        } else {
            assertRefused(exchange(request + "\r\n"), status + " ", null);
        }
    }

    /** A method so long that the request line passes the head limit: 414 (the contract allows 501 or 414). */
    @Test
    void hundredKilobyteMethodIs414() throws IOException {
        assertRefused(exchange("G".repeat(100_000) + " /hello HTTP/1.1\r\nHost: verify\r\n\r\n"), "414 ", "URI Too Long");
    }

    /** obs-fold: Tomcat unfolds the continuation into the previous field (RFC 9112 §5.2), never a field of its own. */
    @Test
    void obsFoldIsUnfoldedNotAField() throws IOException {
        String response = exchange("GET /hello HTTP/1.1\r\nHost: verify\r\nX-Probe: 1\r\n Connection: close\r\n\r\n"
                + "GET /hello HTTP/1.1\r\nHost: verify\r\nConnection: close\r\n\r\n");
        assertEquals(2, response.split("HTTP/1.1 200 ", -1).length - 1, response);
    }

    private static String unescape(String head) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < head.length(); i++) {
            char c = head.charAt(i);
            if (c == '\\' && head.charAt(i + 1) == 'r') {
                out.append('\r');
                i++;
            } else if (c == '\\' && head.charAt(i + 1) == 'n') {
                out.append('\n');
                i++;
            } else if (c == '\\' && head.charAt(i + 1) == 'x') {
                out.append((char) Integer.parseInt(head.substring(i + 2, i + 4), 16));
                i += 3;
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    private static void assertRefused(String response, String status, String body) {
        assertTrue(response.startsWith("HTTP/1.1 " + status), response);
        assertTrue(response.contains("\r\nContent-Type: text/plain; charset=utf-8\r\n"), response);
        assertTrue(response.contains("\r\nConnection: close\r\n"), response);
        if (body != null) {
            assertTrue(response.endsWith("\r\n\r\n" + body), response);
        }
    }

    /**
     * Sends {@code request} (one byte per char) and reads until the server closes the connection; a
     * connection still open after 2 s (keepAliveTimeout is 5 s) fails the test.
     */
    private static String exchange(String request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(2_000);
            try {
                socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            } catch (SocketException e) {
                // reset while writing: the server answered and closed before the whole request was sent
            }
            ByteArrayOutputStream got = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            try {
                for (int n; (n = in.read(buffer)) != -1; ) {
                    got.write(buffer, 0, n);
                }
            } catch (SocketException e) {
                // reset after the answer (the server closes with the rest of the head unread)
            }
            return got.toString(StandardCharsets.ISO_8859_1);
        }
    }
}
