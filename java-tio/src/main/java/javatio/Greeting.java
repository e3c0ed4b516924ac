package javatio;

import java.nio.charset.StandardCharsets;

import org.tio.utils.json.Json;

/**
 * The body of a data answer, {"id":N,"message":"..."}, written by t-io's own JSON ({@code Json.toJson},
 * tio-utils, fastjson underneath): it escapes only '"' and '\' (and control characters, which no
 * message has) and writes '/', '<', '&' and every non-ASCII character as they are, the contract's bytes.
 */
record Greeting(int id, String message) {

    static byte[] json(int id, byte[] message) {
        return Json.toJson(new Greeting(id, new String(message, StandardCharsets.UTF_8))).getBytes(StandardCharsets.UTF_8);
    }
}
