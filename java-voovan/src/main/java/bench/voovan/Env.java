package bench.voovan;

/** Configuration comes from the environment only; a missing variable stops the process at once, by name. */
public final class Env {
    private Env() {}

    public static String require(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            System.err.println("java-voovan: missing environment variable " + name);
            System.exit(2);
        }
        return v;
    }

    public static int requireInt(String name) {
        String v = require(name);
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            System.err.println("java-voovan: environment variable " + name + " is not an integer: " + v);
            System.exit(2);
            return 0;
        }
    }

}
