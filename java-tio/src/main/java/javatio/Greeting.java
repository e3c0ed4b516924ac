package javatio;

import java.io.ByteArrayOutputStream;

import tools.jackson.core.JsonGenerator;
import tools.jackson.core.json.JsonFactory;
import tools.jackson.core.json.JsonWriteFeature;

/**
 * The body of a data answer, {"id":N,"message":"..."}, written by Jackson's streaming generator (as the
 * other Java stacks write it): its UTF-8 generator escapes only '"' and '\' of the stored bytes (and
 * control characters, which no message has) and copies every other byte as it is, the contract's bytes.
 */
final class Greeting {
    private Greeting() {}

    /** Jackson's defaults, stated: no pretty printer, non-ASCII and '/' written as they are. */
    private static final JsonFactory JSON = JsonFactory.builder()
            .disable(JsonWriteFeature.ESCAPE_NON_ASCII)
            .disable(JsonWriteFeature.ESCAPE_FORWARD_SLASHES)
            .build();

    static byte[] json(int id, byte[] message) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(message.length + 32);
        try (JsonGenerator g = JSON.createGenerator(out)) {
            g.writeStartObject();
            g.writeNumberProperty("id", id);
            g.writeName("message");
            g.writeUTF8String(message, 0, message.length);
            g.writeEndObject();
        }
        return out.toByteArray();
    }
}
