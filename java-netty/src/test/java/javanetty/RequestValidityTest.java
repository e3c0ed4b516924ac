package javanetty;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The contract's request validity: RequestValidity on its own, and every case of the verifier's
 * validity check (loadtest/harness/contract/protocol.py, _validity_cases) through the pipeline Main
 * builds, RequestDecoder and HttpHandler, on an EmbeddedChannel: the status, then close or kept.
 */
class RequestValidityTest {
    private static final Pattern STATUS = Pattern.compile("HTTP/1\\.1 (\\d{3}) ");

    private EmbeddedChannel ch;

    @BeforeEach
    void open() {
        ch = new EmbeddedChannel();
        ch.freezeTime();
        Main.pipeline(ch, new App(null, null, null, 1000), new Responses(ch.eventLoop()), 20_000, 75_000);
    }

    @AfterEach
    void close() {
        ch.finishAndReleaseAll();
    }

    /** Sends the request (each char one byte, ISO-8859-1), returns the statuses answered. */
    private String send(String request) {
        ch.writeInbound(Unpooled.copiedBuffer(request, StandardCharsets.ISO_8859_1));
        StringBuilder out = new StringBuilder();
        for (Object o; (o = ch.readOutbound()) != null; ) {
            ByteBuf b = (ByteBuf) o;
            out.append(b.toString(StandardCharsets.ISO_8859_1));
            b.release();
        }
        StringBuilder statuses = new StringBuilder();
        Matcher m = STATUS.matcher(out);
        while (m.find()) statuses.append(statuses.isEmpty() ? "" : " ").append(m.group(1));
        if (!ch.isActive()) {
            assertTrue(out.toString().toLowerCase().contains("\r\nconnection: close\r\n") || statuses.isEmpty(), out.toString());
        }
        return statuses.toString();
    }

    /** The verifier's request: the request line, Host (none if null), more field lines, the empty line. */
    private static String line(String requestLine, String host, String more) {
        return requestLine + "\r\n" + (host != null ? "Host: " + host + "\r\n" : "") + more + "\r\n";
    }

    private static String hello(String host, String more) {
        return line("GET /hello HTTP/1.1", host, more);
    }

    private void refused(String request, String status) {
        assertEquals(status, send(request), request);
        assertFalse(ch.isActive(), "closed after the refusal");
    }

    private void served(String request) {
        assertEquals("200", send(request), request);
        assertTrue(ch.isActive(), "kept open");
    }

    // ------------------------------------------------------------ Host

    @Test
    void http11WithoutHostIs400() {
        refused(hello(null, ""), "400");
    }

    @Test
    void twoHostLinesAre400() {
        refused(hello("verify", "Host: verify\r\n"), "400");
    }

    @Test
    void twoDifferentHostLinesAre400() {
        refused(hello("verify", "Host: other\r\n"), "400");
    }

    @Test
    void twoHostLinesInAnotherCaseAre400() {
        refused(hello("verify", "host: verify\r\n"), "400");
    }

    @ParameterizedTest
    @ValueSource(strings = {"user@verify", "verify/x", "verify, other", "", "verify:x", "[::1", "[verify]:80",
            "verify:80:80", "ver ify", "a,b"})
    void anInvalidHostIs400(String host) {
        refused(hello(host, ""), "400");
    }

    @ParameterizedTest
    @ValueSource(strings = {"verify", "verify:8080", "[::1]:8080", "[::1]", "127.0.0.1", "127.0.0.1:80", "VERIFY.example"})
    void aValidHostIsServed(String host) {
        served(hello(host, ""));
    }

    @Test
    void http10WithoutHostIsServedThenClosed() {
        assertEquals("200", send(line("GET /hello HTTP/1.0", null, "")));
    }

    @Test
    void http10WithTwoHostsIs400() {
        refused(line("GET /hello HTTP/1.0", "verify", "Host: verify\r\n"), "400");
    }

    // ------------------------------------------------------------ request-target

    @Test
    void asteriskFormWithGetIs400() {
        refused(line("GET * HTTP/1.1", "verify", ""), "400");
    }

    @Test
    void asteriskFormWithOptionsIsNotRefused() {
        assertEquals("404", send(line("OPTIONS * HTTP/1.1", "verify", ""))); // no resource named *
        assertTrue(ch.isActive());
    }

    @Test
    void authorityFormWithGetIs400() {
        refused(line("GET verify:80 HTTP/1.1", "verify", ""), "400");
    }

    @Test
    void absoluteFormIsServedAsItsPath() {
        served(line("GET http://verify/hello HTTP/1.1", "verify", ""));
        served(line("GET HTTP://verify:8080/hello HTTP/1.1", "other", ""));
        assertEquals("404", send(line("GET http://verify HTTP/1.1", "verify", ""))); // path "/"
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://user@verify/hello", "http:///hello", "http://verify, other/hello",
            "https://verify/hello", "ftp://verify/hello", "http://verify/hel\u0000lo"})
    void aBadAbsoluteFormIs400(String target) {
        refused(line("GET " + target + " HTTP/1.1", "verify", ""), "400");
    }

    @ParameterizedTest
    @ValueSource(strings = {"/hello\u00ff", "/hello/\u00c0\u00af", "/hel\u0000lo", "/hel\u0001lo", "/hel\u007flo",
            "/hello#x", "/hello?x={}", "/hel\"lo", "/hel\\lo"})
    void aByteOutsideRfc3986InTheTargetIs400(String target) {
        refused(line("GET " + target + " HTTP/1.1", "verify", ""), "400");
    }

    @Test
    void everyRfc3986ByteOfAPathAndQueryIsServed() {
        assertEquals("404", send(line("GET /a-._~!$&'()*+,;=:@%41/?b=/?%zz HTTP/1.1", "verify", "")));
        served(line("GET /hello?x=1&y=:@/?-._~!$&'()*+,;=%20 HTTP/1.1", "verify", ""));
    }

    // ------------------------------------------------------------ method

    @Test
    void aMethodThatIsNotATokenIs400() {
        refused(line("GE{T /hello HTTP/1.1", "verify", ""), "400");
    }

    @Test
    void connectIs501() {
        refused(line("CONNECT verify:443 HTTP/1.1", "verify:443", ""), "501");
    }

    @Test
    void aMethodOf33BytesIs501And32IsNot() {
        assertEquals("405", send(line("G".repeat(32) + " /hello HTTP/1.1", "verify", "")));
        refused(line("G".repeat(33) + " /hello HTTP/1.1", "verify", ""), "501");
    }

    @Test
    void aMethodOf100kBIs414() {
        refused(line("G".repeat(100_000) + " /hello HTTP/1.1", "verify", ""), "414");
    }

    // ------------------------------------------------------------ version

    @ParameterizedTest
    @ValueSource(strings = {"http/1.1", "Http/1.1", "HTTP/1", "HTTP/01.01", "HTTP/1.1.1", "HTTP/a.b", "http/2.0"})
    void aVersionOutsideTheGrammarIs400(String version) {
        refused(line("GET /hello " + version, "verify", ""), "400");
    }

    @Test
    void anotherMajorVersionIs505() {
        refused(line("GET /hello HTTP/2.0", "verify", ""), "505");
    }

    // ------------------------------------------------------------ field lines

    @Test
    void obsFoldIsUnfoldedNeverAFieldOfItsOwn() {
        // Netty joins the continuation to X-Probe's value with one space: "1 Connection: close"
        served(hello("verify", "X-Probe: 1\r\n Connection: close\r\n"));
        served(hello("verify", "X-Probe: 1\r\n\tConnection: close\r\n"));
    }

    @Test
    void aFoldedHostIsOneInvalidValue() {
        refused(hello("verify", " other\r\n"), "400"); // Host: "verify other"
    }

    @Test
    void aFieldLineWithoutAColonIs400() {
        refused(hello("verify", "X-Probe\r\n"), "400");
    }

    @Test
    void aFieldNameWithAByteAbove0x7fIs400() {
        refused(hello("verify", "X-Pr\u00f6be: 1\r\n"), "400");
    }

    @Test
    void aNulInAFieldValueIs400() {
        refused(hello("verify", "X-Probe: a\u0000b\r\n"), "400");
    }

    // ------------------------------------------------------------ the class alone

    @Test
    void authority() {
        for (String ok : new String[]{"verify", "verify:8080", "verify:", "[::1]:8080", "[2001:db8::1]", "127.0.0.1",
                "a-b.c_d~e", "x%41y", "!$&'()*+;="}) {
            assertTrue(RequestValidity.authority(ok, 0, ok.length()), ok);
        }
        for (String bad : new String[]{"", ":80", "user@verify", "verify/x", "verify, other", "a,b", "verify:8o",
                "[::1", "[::1]x", "[zz]", "ver ify", "v\u00e9rify", "v\u0000"}) {
            assertFalse(RequestValidity.authority(bad, 0, bad.length()), bad);
        }
    }

    @Test
    void version() {
        RequestValidity.version("HTTP/1.1");
        RequestValidity.version("HTTP/2.0"); // well-formed: check() answers 505
        for (String bad : new String[]{"http/1.1", "HTTP/1", "HTTP/01.01", "HTTP/1.10", "HTTP/1,1", "HTTP-1.1"}) {
            assertSame(RequestValidity.BAD_VERSION, assertThrows(RequestValidity.Invalid.class,
                    () -> RequestValidity.version(bad)), bad);
        }
    }

    @Test
    void checkRewritesAnAbsoluteFormToItsPathAndQuery() {
        HttpRequest req = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "http://verify?id=1");
        req.headers().set("Host", "verify");
        assertNull(RequestValidity.check(req, 1));
        assertEquals("/?id=1", req.uri());
        req.setUri("http://verify:80/redis?id=1");
        assertNull(RequestValidity.check(req, 1));
        assertEquals("/redis?id=1", req.uri());
    }

    @Test
    void checkOrder() {
        HttpRequest req = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.CONNECT, "verify:443");
        assertSame(RequestValidity.CONNECT, RequestValidity.check(req, 0)); // 501 before Host and target
        req = new DefaultHttpRequest(HttpVersion.valueOf("HTTP/2.0"), HttpMethod.GET, "/hello");
        assertSame(RequestValidity.OTHER_MAJOR, RequestValidity.check(req, 0));
        req = new DefaultHttpRequest(HttpVersion.HTTP_1_1, HttpMethod.GET, "*");
        assertSame(RequestValidity.NO_HOST, RequestValidity.check(req, 0));
    }
}
