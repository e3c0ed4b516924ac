package javatio;

/** Configuration comes only from the environment (shared-schema/defaults.env + PORT + STACK_NAME). */
final class Env {
    private Env() {}

    static String str(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException("missing environment variable " + name);
        }
        return v;
    }

    static int integer(String name) {
        String v = str(name);
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalStateException("environment variable " + name + " is not an integer: " + v);
        }
    }

    /** One of an enum's constants, by name. */
    static <E extends Enum<E>> E choice(String name, Class<E> type) {
        String v = str(name).trim();
        try {
            return Enum.valueOf(type, v);
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("environment variable " + name + " is not one of "
                    + java.util.Arrays.toString(type.getEnumConstants()) + ": " + v);
        }
    }
}
