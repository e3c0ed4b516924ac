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

import dev.reference.tomcat.internals.ContentTypeValve;
import dev.reference.tomcat.internals.ContractTimeoutsProtocol;
import dev.reference.tomcat.internals.RefusalReportValve;

/**
 * The Tomcat workarounds of the internals package on a plain embedded Tomcat (no Spring, no backends),
 * installed as TomcatConfig installs them, spoken to over a raw socket: the Content-Type's spelling,
 * 414 and 431 for an oversized head, and the head deadline.
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
            @Override
            protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
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

    private static void assertRefused(String response, String status, String body) {
        assertTrue(response.startsWith("HTTP/1.1 " + status), response);
        assertTrue(response.contains("\r\nContent-Type: text/plain; charset=utf-8\r\n"), response);
        assertTrue(response.contains("\r\nConnection: close\r\n"), response);
        assertTrue(response.endsWith("\r\n\r\n" + body), response);
    }

    /** Sends {@code request} and reads until the server closes the connection. */
    private static String exchange(String request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
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
