<?php
// Handlers for the endpoint contract (shared-schema/CONTRACT.md), run by PHP-FPM workers.
//
// Each worker is a process that handles one request at a time, so what a request blocks on
// (a backend read, the 10 ms sleep) holds its worker; the pool size (conf/php-fpm.conf) is the
// concurrency. Connections to Redis, MariaDB and memcached are persistent: they belong to the
// worker process and survive from one request to the next, so a request costs one round trip to
// the backend, not a TCP connect plus handshake (and for MariaDB, authentication).
declare(strict_types=1);

// Class constants, not global `const`s: preloading keeps classes and functions, not constants.
// Workaround: preloading keeps no global constants (README, Workarounds)
final class C
{
    public const TEXT = 'text/plain; charset=utf-8';
    public const JSON = 'application/json';
    public const ROUTES = ['/hello' => true, '/sleep' => true, '/redis' => true, '/mysql' => true, '/memcache' => true];
    public const ERRORS = [400 => 'Bad Request', 404 => 'Not Found', 405 => 'Method Not Allowed',
                           500 => 'Internal Server Error', 503 => 'Service Unavailable'];
    /** FPM_PARAMS=server: the request's $_SERVER (app/params-server.php); null: read with getenv(). */
    public static ?array $server = null;
    /** libmemcached's result codes that say the server could not be reached or did not answer in time. */
    public const MEMCACHED_UNAVAILABLE = [
        Memcached::RES_CONNECTION_FAILURE, Memcached::RES_HOST_LOOKUP_FAILURE, Memcached::RES_WRITE_FAILURE,
        Memcached::RES_READ_FAILURE, Memcached::RES_UNKNOWN_READ_FAILURE, Memcached::RES_ERRNO,
        Memcached::RES_TIMEOUT, Memcached::RES_SERVER_MARKED_DEAD, Memcached::RES_SERVER_TEMPORARILY_DISABLED,
        Memcached::RES_NO_SERVERS,
    ];
}

/** The backends failed or did not answer in time: answer 503. */
final class Unavailable extends RuntimeException {}

/** The backend answered, with an error that is not about its availability: answer 500. */
final class BackendError extends RuntimeException {}


function respond(int $status, string $type, string $body, bool $allow = false): void
{
    http_response_code($status);
    // nginx passes a FastCGI Server header through (fastcgi_hide_header does not list it) and then
    // adds none of its own; Date and Connection are nginx's.
    // Workaround: no headers-more in nginx-light, so Server comes from PHP (README, Workarounds)
    header('Server: php-fpm');
    header('Content-Type: ' . $type);
    // An explicit length: nginx then forwards the body as is instead of chunking it.
    header('Content-Length: ' . strlen($body));
    if ($allow) {
        header('Allow: GET, HEAD');
    }
    echo $body; // PHP-FPM drops the body of a HEAD request itself.
}

function error_response(int $status): void
{
    respond($status, C::TEXT, C::ERRORS[$status], $status === 405);
}

/**
 * Exactly one `id` parameter, percent-decoded (`+` is a space), 1 to 9 digits without a leading zero.
 * Returns null for anything else (a 400).
 */
function parse_id(string $query): ?int
{
    $value = null;
    foreach (explode('&', $query) as $pair) {
        $eq = strpos($pair, '=');
        $name = urldecode($eq === false ? $pair : substr($pair, 0, $eq));
        if ($name !== 'id') {
            continue;
        }
        if ($value !== null) {
            return null; // repeated id
        }
        $value = urldecode($eq === false ? '' : substr($pair, $eq + 1));
    }
    if ($value === null || preg_match('/\A[1-9][0-9]{0,8}\z/', $value) !== 1) {
        return null;
    }
    return (int) $value;
}

/**
 * {"id":N,"message":"..."}: PHP's own encoder with `/` and non-ASCII left raw, which gives the
 * contract's bytes (only `"` and `\` escaped) for every stored greeting. A message that is not
 * valid UTF-8 throws (a 500), never a wrong body.
 */
function greeting_json(int $id, string $message): string
{
    return json_encode(['id' => $id, 'message' => $message],
        JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
}

function fetch_redis(int $id): ?string
{
    $t = Settings::TIMEOUT_S;
    $redis = new Redis();
    try {
        // pconnect: the connection is kept in the worker's persistent list and reused by the next
        // request. Connect and read timeouts both come from BACKEND_TIMEOUT_MS; on a read error
        // or timeout phpredis closes the socket, so a late reply can never be read as the answer
        // to a later command.
        if (Settings::PERSISTENT) {
            $redis->pconnect(Settings::REDIS_HOST, Settings::REDIS_PORT, $t, 'greetings', 0, $t);
        } else {
            $redis->connect(Settings::REDIS_HOST, Settings::REDIS_PORT, $t, null, 0, $t);
        }
        $value = $redis->get("greeting:$id");
    } catch (RedisException $e) {
        // phpredis throws for a connection failure or timeout, and also for an error reply that
        // does not start with ERR, WRONGTYPE and a few others (NOPERM, NOAUTH, LOADING, ...:
        // redis_error_throw in library.c).
        throw redis_failure($redis, $e);
    }
    // Workaround: phpredis returns false for ERR/WRONGTYPE replies (README, Workarounds)
    if ($value === false && $redis->getLastError() !== null) {
        // An error reply phpredis does not throw for (ERR, WRONGTYPE): false, like a miss.
        throw redis_failure($redis, null);
    }
    return $value === false ? null : $value;
}

/**
 * What a failed command means: the server answering with an error is a 500, unless the error
 * says it cannot serve now (LOADING, BUSY, MASTERDOWN, TRYAGAIN, CLUSTERDOWN); anything else (no
 * connection, no reply in time) is a 503. phpredis keeps an error reply as its last error, but
 * records a failed reconnect there too ("Connection refused"); a Redis error reply starts with
 * its kind in capitals (the RESP spec, "Simple errors").
 */
function redis_failure(Redis $redis, ?RedisException $e): RuntimeException
{
    try {
        $error = $redis->getLastError() ?? '';
    } catch (RedisException) {
        // Workaround: phpredis getLastError() throws on a lost connection (README, Workarounds)
        $error = ''; // phpredis throws here too when the connection is gone: no reply came
    }
    if (preg_match('/\A([A-Z][A-Z0-9_]*)(?: |\z)/', $error, $kind) !== 1
            || in_array($kind[1], ['LOADING', 'BUSY', 'MASTERDOWN', 'TRYAGAIN', 'CLUSTERDOWN'], true)) {
        return new Unavailable('redis: ' . ($e?->getMessage() ?? $error), 0, $e);
    }
    return new BackendError("redis replied: $error", 0, $e);
}

/**
 * $startedAt: when nginx passed the request on (REQUEST_START_MSEC, conf/nginx.conf), whose
 * fastcgi_read_timeout answers 503 BACKEND_TIMEOUT_MS later: a request that waited that long in
 * PHP-FPM's queue for a worker already has its answer, and is not run.
 */
function fetch_mysql(int $id, float $startedAt): ?string
{
    $left = Settings::TIMEOUT_S - (microtime(true) - $startedAt);
    // Workaround: a /mysql nginx already answered 503 is not run (README, Workarounds)
    if ($left <= 0) {
        throw new Unavailable('answered 503 by nginx while queued for a worker; not run');
    }
    try {
        // ATTR_PERSISTENT: the handle (and its socket) lives in the worker across requests; PDO
        // checks it with a COM_PING when it is picked up again and reconnects if that fails.
        // Timeouts: PDO::ATTR_TIMEOUT is the connect timeout and mysqlnd.net_read_timeout
        // (conf/php.ini) the read timeout, both in whole seconds. A read error closes the
        // connection in mysqlnd (the next ping fails at once and a fresh one is opened).
        $pdo = new PDO(
            Settings::MYSQL_DSN,
            Settings::MYSQL_USER,
            Settings::MYSQL_PASSWORD,
            [
                PDO::ATTR_PERSISTENT => Settings::PERSISTENT,
                PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
                PDO::ATTR_TIMEOUT => max(1, (int) ceil(Settings::TIMEOUT_S)),
                // Client-side prepared: PDO binds and quotes the parameter and sends one
                // COM_QUERY (one round trip instead of prepare + execute + close).
                PDO::ATTR_EMULATE_PREPARES => true,
            ]
        );
        // MariaDB's own per-statement limit, to the millisecond: a statement still waiting (for a
        // metadata lock, say) when the time left runs out is aborted by the server (1969), and the
        // connection stays usable. mysqlnd's read timeout, whole seconds, would instead give up on
        // the connection and leave the statement running in MariaDB on a socket it never closes.
        // Workaround: mysqlnd read timeout leaves the statement running (README, Workarounds)
        $stmt = $pdo->prepare(sprintf('SET STATEMENT max_statement_time=%.3F FOR ', max(0.001, $left))
            . 'SELECT id, message FROM greeting WHERE id = ?');
        $stmt->bindValue(1, $id, PDO::PARAM_INT);
        $stmt->execute();
        $row = $stmt->fetch(PDO::FETCH_NUM);
        $stmt->closeCursor();
    } catch (PDOException $e) {
        throw mysql_unavailable($e) ? new Unavailable($e->getMessage(), 0, $e) : new BackendError($e->getMessage(), 0, $e);
    }
    return $row === false ? null : $row[1];
}

/**
 * Whether a PDO error is about MariaDB's availability (503) rather than an error it answered
 * with (a SQL error such as 1146 ER_NO_SUCH_TABLE: 500). The client's own errors (2000-2999:
 * cannot connect, server gone away, lost connection, read timeout) and the server's refusals of
 * a connection (1040 too many connections, 1053 shutting down, 1927 connection killed) are, and
 * 1969, the statement aborted at max_statement_time: no answer within the deadline.
 */
function mysql_unavailable(PDOException $e): bool
{
    // errorInfo[1] is the driver's code; a failed connect carries it in getCode() instead.
    $code = $e->errorInfo[1] ?? $e->getCode();
    return is_int($code) && (($code >= 2000 && $code < 3000) || in_array($code, [1040, 1053, 1927, 1969], true));
}

function fetch_memcache(int $id): ?string
{
    // A persistent Memcached instance: with a persistent id, libmemcached's handle and its
    // connection survive the request; the server is added once per worker.
    $mc = Settings::PERSISTENT ? new Memcached('greetings') : new Memcached();
    if ($mc->isPristine()) { // a new instance (not one this worker kept): configure it once
        $ms = Settings::TIMEOUT_MS;
        $mc->setOptions([
            Memcached::OPT_CONNECT_TIMEOUT => $ms,          // ms
            Memcached::OPT_POLL_TIMEOUT => $ms,             // ms
            Memcached::OPT_SEND_TIMEOUT => $ms * 1000,      // µs
            Memcached::OPT_RECV_TIMEOUT => $ms * 1000,      // µs
            Memcached::OPT_RETRY_TIMEOUT => 0,              // retry a failed server on the next request
            Memcached::OPT_TCP_NODELAY => true,
        ]);
        $mc->addServer(Settings::MEMCACHE_HOST, Settings::MEMCACHE_PORT);
    }
    $value = $mc->get("greeting:$id");
    // Workaround: a dead persistent memcached connection, retried once (README, Workarounds)
    if ($value === false && $mc->getResultCode() === Memcached::RES_CONNECTION_FAILURE) {
        // The persistent connection was closed by the other end (memcached restarted since this
        // worker last used it): the request never reached a server. Once more, on a new
        // connection. A timeout is never retried (the server may have read the request).
        $value = $mc->get("greeting:$id");
    }
    if ($value === false) {
        $code = $mc->getResultCode();
        $message = $mc->getResultMessage();
        // Workaround: php-memcached reports SERVER_ERROR as NOT FOUND (README, Workarounds)
        if ($code === Memcached::RES_NOTFOUND) {
            // php-memcached reports a get that memcached answered with an error line
            // (`SERVER_ERROR ...`) as NOT FOUND as well; libmemcached's last error, which every
            // operation resets, tells them apart (measured: SUCCESS after a real miss,
            // SERVER_ERROR after the error line).
            $last = $mc->getLastErrorCode();
            if ($last === Memcached::RES_SUCCESS || $last === Memcached::RES_NOTFOUND) {
                return null;
            }
            [$code, $message] = [$last, $mc->getLastErrorMessage()];
        }
        if (in_array($code, C::MEMCACHED_UNAVAILABLE, true)) {
            // A timeout or connection failure: libmemcached has closed the socket already.
            throw new Unavailable($message, $code);
        }
        throw new BackendError("memcached: $message", $code); // the server answered with an error
    }
    return (string) $value;
}

/**
 * A FastCGI parameter of this request (conf/fastcgi_params.conf), or null. Under PHP-FPM getenv()
 * answers from the request's own parameters without building $_SERVER, which copies every
 * parameter, header and environment variable on first use (README, Tuning: FPM_PARAMS).
 */
function param(string $name): ?string
{
    if (C::$server !== null) {
        return C::$server[$name] ?? null;
    }
    $value = getenv($name);
    return $value === false ? null : $value;
}

function handle(): void
{
    if (param('APP_DEADLINE') !== null) {
        // The [deadline] pool: nginx's fastcgi_read_timeout fired for a /mysql request (no answer
        // within BACKEND_TIMEOUT_MS, waiting for a free worker included). conf/nginx.conf.
        error_response(503);
        return;
    }
    $uri = param('REQUEST_URI') ?? '/';
    $q = strpos($uri, '?');
    $path = $q === false ? $uri : substr($uri, 0, $q);
    if (!isset(C::ROUTES[$path])) {
        error_response(404);
        return;
    }
    $method = param('REQUEST_METHOD') ?? '';
    if ($method !== 'GET' && $method !== 'HEAD') {
        error_response(405);
        return;
    }
    if ($path === '/hello') {
        respond(200, C::TEXT, 'Hello, World!');
        return;
    }
    if ($path === '/sleep') {
        usleep(10000); // holds this worker for 10 ms: the pool size caps /sleep at max_children / 10 ms
        respond(200, C::TEXT, 'Slept 10 ms');
        return;
    }
    $id = parse_id($q === false ? '' : substr($uri, $q + 1));
    if ($id === null) {
        error_response(400);
        return;
    }
    try {
        $message = match ($path) {
            '/redis' => fetch_redis($id),
            '/mysql' => fetch_mysql($id, (float) (param('REQUEST_START_MSEC') ?? microtime(true))),
            '/memcache' => fetch_memcache($id),
        };
    } catch (Unavailable $e) {
        error_log("php-fpm: $path?id=$id: backend unavailable: " . $e->getMessage());
        error_response(503);
        return;
    } catch (BackendError $e) {
        error_log("php-fpm: $path?id=$id: backend error: " . $e->getMessage());
        error_response(500);
        return;
    } catch (Throwable $e) {
        error_log("php-fpm: $path?id=$id: " . $e);
        error_response(500);
        return;
    }
    if ($message === null) {
        error_response(404);
        return;
    }
    respond(200, C::JSON, greeting_json($id, $message));
}
