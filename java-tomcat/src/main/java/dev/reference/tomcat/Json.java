package dev.reference.tomcat;

/**
 * {@code {"id":N,"message":"..."}} byte for byte: only {@code "} and {@code \} are escaped, every
 * other byte of the stored UTF-8 message is copied as it is. Working on bytes is safe because
 * {@code "} (0x22) and {@code \} (0x5C) never occur inside a multi-byte UTF-8 sequence.
 */
final class Json {

    private static final byte[] OPEN = "{\"id\":".getBytes();
    private static final byte[] MIDDLE = ",\"message\":\"".getBytes();
    private static final byte[] CLOSE = "\"}".getBytes();

    private Json() {
    }

    static byte[] greeting(int id, byte[] message) {
        byte[] digits = Integer.toString(id).getBytes();
        int escapes = 0;
        for (byte b : message) {
            if (b == '"' || b == '\\') {
                escapes++;
            }
        }
        byte[] out = new byte[OPEN.length + digits.length + MIDDLE.length + message.length + escapes + CLOSE.length];
        int at = put(out, 0, OPEN);
        at = put(out, at, digits);
        at = put(out, at, MIDDLE);
        if (escapes == 0) {
            at = put(out, at, message);
        } else {
            for (byte b : message) {
                if (b == '"' || b == '\\') {
                    out[at++] = '\\';
                }
                out[at++] = b;
            }
        }
        put(out, at, CLOSE);
        return out;
    }

    private static int put(byte[] out, int at, byte[] part) {
        System.arraycopy(part, 0, out, at, part.length);
        return at + part.length;
    }
}
