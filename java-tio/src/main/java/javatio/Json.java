package javatio;

import java.nio.charset.StandardCharsets;

/** {"id":N,"message":"..."} escaping only '"' and '\' (UTF-8 continuation bytes never equal them). */
final class Json {
    private static final byte[] A = "{\"id\":".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] B = ",\"message\":\"".getBytes(StandardCharsets.US_ASCII);

    private Json() {}

    static byte[] greeting(int id, byte[] message) {
        byte[] digits = Integer.toString(id).getBytes(StandardCharsets.US_ASCII);
        int escapes = 0;
        for (byte b : message) {
            if (b == '"' || b == '\\') {
                escapes++;
            }
        }
        byte[] out = new byte[A.length + digits.length + B.length + message.length + escapes + 2];
        int o = 0;
        System.arraycopy(A, 0, out, o, A.length);
        o += A.length;
        System.arraycopy(digits, 0, out, o, digits.length);
        o += digits.length;
        System.arraycopy(B, 0, out, o, B.length);
        o += B.length;
        for (byte b : message) {
            if (b == '"' || b == '\\') {
                out[o++] = '\\';
            }
            out[o++] = b;
        }
        out[o++] = '"';
        out[o] = '}';
        return out;
    }
}
