package javatio;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * The Date header value, IMF-fixdate, formatted at most once per second.
 * (t-io's own HttpDateTimer uses "EEE, d MMM yyyy" in the JVM's time zone: not IMF-fixdate.)
 * Workaround: t-io's Date value is not IMF-fixdate (README, Workarounds)
 */
final class HttpDate {
    private static final DateTimeFormatter IMF = DateTimeFormatter
            .ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US).withZone(ZoneOffset.UTC);

    private record Stamp(long second, byte[] bytes) {}

    private static volatile Stamp current = make(System.currentTimeMillis() / 1000);

    private HttpDate() {}

    private static Stamp make(long second) {
        return new Stamp(second, IMF.format(Instant.ofEpochSecond(second)).getBytes(StandardCharsets.US_ASCII));
    }

    static byte[] now() {
        long second = System.currentTimeMillis() / 1000;
        Stamp s = current;
        if (s.second != second) {
            s = make(second);
            current = s;
        }
        return s.bytes;
    }
}
