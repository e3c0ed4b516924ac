package javanetty;

/** Configuration comes only from the environment (shared-schema/defaults.env plus PORT); nothing is defaulted here. */
record Config(String host, int port,
              String redisHost, int redisPort,
              String mysqlHost, int mysqlPort, String mysqlUser, String mysqlPassword, String mysqlDatabase,
              String memcacheHost, int memcachePort,
              int backendTimeoutMs, int headTimeoutMs, int idleTimeoutMs) {

    static Config fromEnv() {
        return new Config(str("HOST"), num("PORT"),
                str("REDIS_HOST"), num("REDIS_PORT"),
                str("MYSQL_HOST"), num("MYSQL_PORT"), str("MYSQL_USER"), str("MYSQL_PASSWORD"), str("MYSQL_DATABASE"),
                str("MEMCACHE_HOST"), num("MEMCACHE_PORT"),
                num("BACKEND_TIMEOUT_MS"), num("HEAD_TIMEOUT_MS"), num("IDLE_TIMEOUT_MS"));
    }

    private static String str(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException("missing environment variable " + name
                    + " (see shared-schema/defaults.env; the harness passes every one of them)");
        }
        return v;
    }

    private static int num(String name) {
        String v = str(name);
        try {
            return Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalStateException("environment variable " + name + " is not a number: " + v);
        }
    }
}
