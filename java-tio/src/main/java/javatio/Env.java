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

    /** Experiment switches for the tuning runs (README, "Tuning"); run.sh sets none of them. */
    static int prop(String name, int dflt) {
        return Integer.getInteger(name, dflt);
    }
}
