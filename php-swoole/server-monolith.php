<?php
// php-swoole: the endpoint contract (shared-schema/CONTRACT.md) on Swoole's HTTP server.
//
// One worker process per core; inside a worker every request is a coroutine. With the runtime
// hooks on, phpredis and PDO (mysqlnd), which do their I/O through PHP streams, yield the
// coroutine while they wait, and so does Coroutine::sleep(): a worker serves thousands of
// requests at once and /sleep holds no worker. memcached goes through Swoole's own coroutine TCP
// client (see MemcacheConnection). Each worker keeps Swoole's own connection pools
// (Swoole\Database\RedisPool, PDOPool, Swoole\ConnectionPool), filled at start.
declare(strict_types=1);

use Swoole\ConnectionPool;
use Swoole\Coroutine;
use Swoole\Coroutine\CanceledException;
use Swoole\Coroutine\Channel;
use Swoole\Coroutine\Client;
use Swoole\Database\PDOConfig;
use Swoole\Database\PDOPool;
use Swoole\Database\PDOProxy;
use Swoole\Database\RedisConfig;
use Swoole\Database\RedisPool;
use Swoole\Event;
use Swoole\Http\Request;
use Swoole\Http\Response;
use Swoole\Http\Server;
use Swoole\Timer;

const TEXT = 'text/plain; charset=utf-8';
const JSON = 'application/json';
const ROUTES = ['/hello' => true, '/sleep' => true, '/redis' => true, '/mysql' => true, '/memcache' => true];
const ERRORS = [400 => 'Bad Request', 404 => 'Not Found', 405 => 'Method Not Allowed', 408 => 'Request Timeout',
                414 => 'URI Too Long', 431 => 'Request Header Fields Too Large', 500 => 'Internal Server Error',
                503 => 'Service Unavailable'];
// CONTRACT.md, "Sizes": a longer request line is 414, a longer head 431 (a head of 8,193 to 16,384
// bytes is served). Swoole has no setting for either: its reactor reads a head of up to 64 KiB
// (README, "Protocol hygiene"), and App::refusal() measures the raw head it hands over.
const MAX_REQUEST_LINE = 8192;
const MAX_HEAD = 16384;

function env(string $name): string
{
    $value = getenv($name);
    if ($value === false || $value === '') {
        fwrite(STDERR, "php-swoole: missing environment variable $name\n");
        exit(2);
    }
    return $value;
}

$config = [];
foreach (['HOST', 'PORT', 'BACKEND_TIMEOUT_MS', 'HEAD_TIMEOUT_MS', 'IDLE_TIMEOUT_MS', 'REDIS_HOST', 'REDIS_PORT',
          'MYSQL_HOST', 'MYSQL_PORT', 'MYSQL_USER', 'MYSQL_PASSWORD', 'MYSQL_DATABASE', 'MEMCACHE_HOST',
          'MEMCACHE_PORT'] as $name) {
    $config[$name] = env($name);
}
define('TIMEOUT_MS', (int) $config['BACKEND_TIMEOUT_MS']);
define('TIMEOUT', TIMEOUT_MS / 1000);
// Workaround: Swoole's timers may fire up to 2 ms early (README, Workarounds)
// How early Swoole's timers may fire: a timeout is cut to whole milliseconds and counted on a
// millisecond clock (src/wrapper/timer.cc, src/core/timer.cc).
const TIMER_SLACK = 0.002;
if (TIMEOUT_MS <= 0) {
    fwrite(STDERR, "php-swoole: BACKEND_TIMEOUT_MS must be a positive number of milliseconds\n");
    exit(2);
}
// Connections per worker and backend (README, Tuning); the manifest's run line sets the default.
$config['SWOOLE_POOL_SIZE'] = env('SWOOLE_POOL_SIZE');
foreach (['HEAD_TIMEOUT_MS', 'IDLE_TIMEOUT_MS', 'SWOOLE_POOL_SIZE'] as $name) {
    if (preg_match('/\A[1-9][0-9]*\z/', $config[$name]) !== 1) {
        fwrite(STDERR, "php-swoole: $name must be a positive integer\n");
        exit(2);
    }
}
// Worker processes: one per usable CPU unless SWOOLE_WORKERS says otherwise (README, Tuning, worker_num).
$workers = getenv('SWOOLE_WORKERS');
if ($workers !== false && $workers !== '' && preg_match('/\A[1-9][0-9]{0,3}\z/', $workers) !== 1) {
    fwrite(STDERR, "php-swoole: SWOOLE_WORKERS must be an integer from 1 to 9999\n");
    exit(2);
}
$config['SWOOLE_WORKERS'] = $workers === false ? '' : $workers;
define('HEAD_TIMEOUT', ((int) $config['HEAD_TIMEOUT_MS']) / 1000);
define('IDLE_TIMEOUT', ((int) $config['IDLE_TIMEOUT_MS']) / 1000);
define('POOL_SIZE', (int) $config['SWOOLE_POOL_SIZE']);
// How often App::sweep() looks at the connections: an eighth of the shorter limit, at most 500 ms.
define('SWEEP_MS', (int) max(20, min(500, min(HEAD_TIMEOUT, IDLE_TIMEOUT) * 1000 / 8)));
// Workaround: mysqlnd's timeouts count whole seconds (README, Workarounds)
// mysqlnd only knows whole seconds: a backstop; the request's deadline is App::fetch()'s.
ini_set('mysqlnd.net_read_timeout', (string) max(1, (int) ceil(TIMEOUT)));

/** A backend is down, refused, or did not answer within the deadline: a 503. */
final class Unavailable extends RuntimeException {}

/** The backend answered, with an error that is not about its availability (a Redis error reply, a SQL error): a 500. */
final class BackendError extends RuntimeException {}

// Workaround: ConnectionPool::put(null) reconnects in the caller; idle connections cannot be dropped (README, Workarounds)
/**
 * What this stack adds to Swoole's ConnectionPool (get(), put(), fill() and the constructors are
 * Swoole's). ConnectionPool::put(null), its way to give back a broken connection, opens the
 * replacement at once in the caller: on a frozen backend that connect would hold the 503 past its
 * deadline, and on a stopped one it throws. And a pool has no way to drop its idle connections,
 * which are all dead after a backend restart. So:
 */
trait Discards
{
    /** The connection in hand is broken and dropped: the pool counts it gone, and get() opens a new one when it needs one. */
    public function discard(): void
    {
        $this->num--;
    }

    /** After a connection-level failure every idle connection is suspect (a restarted backend closed them all): drop them. */
    public function discardIdle(): void
    {
        while ($this->pool !== null && !$this->pool->isEmpty()) {
            $this->pool->pop();
            $this->num--;
        }
    }
}

final class Redises extends RedisPool
{
    use Discards;
}

final class Pdos extends PDOPool
{
    use Discards;
}

final class Memcaches extends ConnectionPool
{
    use Discards;
}

/**
 * Whether a PDO error is about MariaDB's availability (503) rather than an error it answered
 * with (a SQL error such as 1146 ER_NO_SUCH_TABLE: 500). The client's own errors (2000-2999:
 * cannot connect, server gone away, lost connection, read timeout) and the server's refusals of
 * a connection (1040 too many connections, 1053 shutting down, 1927 connection killed) are.
 */
function mysql_unavailable(PDOException $e): bool
{
    // errorInfo[1] is the driver's code; a failed connect carries it in getCode() instead.
    $code = $e->errorInfo[1] ?? $e->getCode();
    return is_int($code) && (($code >= 2000 && $code < 3000) || in_array($code, [1040, 1053, 1927], true));
}

// Workaround: phpredis returns false for ERR and WRONGTYPE replies, as for a miss (README, Workarounds)
/**
 * One Redis GET, its reply awaited at most $left seconds. phpredis returns false for a missing
 * key and also for some error replies (ERR, WRONGTYPE), and throws RedisException for a
 * connection failure or timeout and for the other error replies (NOPERM, NOAUTH, LOADING, ...:
 * redis_error_throw in phpredis's library.c). Either way the reply stays in getLastError(); a
 * connection in the pool has none (redis_failure() clears it before one goes back), so a false
 * with a last error is this command's.
 */
function redis_get(Redis $r, string $key, float $left): ?string
{
    try {
        // The read's timeout is what is left of the request's deadline (App::fetch()).
        $r->setOption(Redis::OPT_READ_TIMEOUT, $left);
        $value = $r->get($key);
    } catch (RedisException $e) {
        throw redis_failure($r, $e);
    }
    if ($value === false && $r->getLastError() !== null) {
        throw redis_failure($r, null);
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
function redis_failure(Redis $r, ?RedisException $e): RuntimeException
{
    try {
        $error = $r->getLastError() ?? '';
        $r->clearLastError(); // an error reply keeps the connection (BackendError): it goes back clean
    } catch (RedisException) {
        $error = ''; // phpredis throws here too when the connection is gone: no reply came
    }
    if (preg_match('/\A([A-Z][A-Z0-9_]*)(?: |\z)/', $error, $kind) !== 1
            || in_array($kind[1], ['LOADING', 'BUSY', 'MASTERDOWN', 'TRYAGAIN', 'CLUSTERDOWN'], true)) {
        return new Unavailable('redis: ' . ($e?->getMessage() ?? $error), 0, $e);
    }
    return new BackendError("redis replied: $error", 0, $e);
}

// Workaround: no maintained PHP memcached client yields to Swoole (README, Workarounds)
/**
 * memcached's text protocol over Swoole's coroutine TCP client: one `get`, the reply read until
 * it is complete. No maintained memcached client for PHP yields to Swoole: php-memcached is
 * libmemcached, whose sockets are its own C code, which no runtime hook reaches (Swoole hooks PHP
 * streams, ext-sockets, curl and a few PDO drivers it ships: SWOOLE_HOOK_* in
 * include/swoole_coroutine.h); php-memcache reports a timed-out get as a miss (README).
 */
final class MemcacheConnection
{
    private Client $client;

    public function __construct(string $host, int $port)
    {
        $this->client = new Client(SWOOLE_SOCK_TCP);
        $this->client->set(['open_tcp_nodelay' => true]);
        if (!$this->client->connect($host, $port, TIMEOUT)) {
            throw new Unavailable("memcached: connect: {$this->client->errMsg}");
        }
    }

    /** One `get`, its reply read until $deadline (microtime). */
    public function get(string $key, float $deadline): ?string
    {
        if ($this->client->send("get $key\r\n") === false) {
            throw new Unavailable("memcached: send: {$this->client->errMsg}");
        }
        $buf = '';
        while (true) {
            if (str_starts_with($buf, "END\r\n")) {
                return null;
            }
            $eol = strpos($buf, "\r\n");
            if ($eol !== false) {
                // VALUE <key> <flags> <bytes>\r\n<data>\r\nEND\r\n
                $head = explode(' ', substr($buf, 0, $eol));
                if ($head[0] === 'SERVER_ERROR' || $head[0] === 'CLIENT_ERROR' || $head[0] === 'ERROR') {
                    // The whole reply is that one line: the connection stays in step.
                    throw new BackendError('memcached replied: ' . substr($buf, 0, $eol));
                }
                if ($head[0] !== 'VALUE' || count($head) < 4) {
                    throw new RuntimeException('memcached: unexpected reply ' . substr($buf, 0, $eol));
                }
                $len = (int) $head[3];
                if (strlen($buf) >= $eol + 2 + $len + 7) {
                    if (substr($buf, $eol + 2 + $len, 7) !== "\r\nEND\r\n") {
                        throw new RuntimeException('memcached: malformed reply');
                    }
                    return substr($buf, $eol + 2, $len);
                }
            }
            $left = $deadline - microtime(true);
            if ($left <= 0) {
                throw new Unavailable('memcached: no answer within the deadline');
            }
            $chunk = $this->client->recv($left);
            if ($chunk === '' || $chunk === false) {
                throw new Unavailable('memcached: ' . ($chunk === '' ? 'connection closed' : $this->client->errMsg));
            }
            $buf .= $chunk;
        }
    }

    public function close(): void
    {
        $this->client->close();
    }
}

/** Exactly one `id` parameter, percent-decoded, 1 to 9 digits without a leading zero; else null. */
function parse_id(string $query): ?int
{
    // The common query, `id=N` and nothing else: no split, no decoding, no regular expression
    // (measured: the long way below costs ~2 µs of CPU per request, NOTES.md).
    $digits = strlen($query) - 3;
    if ($digits >= 1 && $digits <= 9 && str_starts_with($query, 'id=') && $query[3] !== '0'
            && strspn($query, '0123456789', 3) === $digits) {
        return (int) substr($query, 3);
    }
    $value = null;
    foreach (explode('&', $query) as $pair) {
        $eq = strpos($pair, '=');
        $name = urldecode($eq === false ? $pair : substr($pair, 0, $eq));
        if ($name !== 'id') {
            continue;
        }
        if ($value !== null) {
            return null;
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

final class App
{
    private Redises $redis;
    private Pdos $mysql;
    private Memcaches $memcache;
    /** @var WeakMap<PDO, PDOStatement> each MariaDB connection's prepared statement */
    private WeakMap $statements;
    /** @var array<int, true> coroutines whose deadline timer fired (fetch(), expire()) */
    private array $expired = [];
    /** expire() as a Closure, made once: the deadline timer's callback */
    private Closure $onDeadline;
    /**
     * Requests one connection may have in flight before the worker stops reading from it
     * (Server::pause), and the count at which it reads again: pipelined requests are coroutines
     * that wait for the answer before them, and a client that pipelines without end must not pile
     * them up (README, "Protocol hygiene").
     */
    private const MAX_INFLIGHT = 256;
    private const RESUME_INFLIGHT = 128;
    /**
     * Requests in flight in this worker above which a connection that already has one in flight is
     * closed at its next: a last resort against many such clients at once, below the ~50,000
     * waiting coroutines at which the worker dies of memory_limit (README).
     */
    private const MAX_INFLIGHT_WORKER = 20000;

    /**
     * @var array<int, int> per connection with requests in flight: how many it has received, so
     * the turn of the next one (0, 1, ...). Its responses go out in turn order ($written); both
     * entries are dropped when the last response in flight is written, so a connection has
     * requests in flight exactly when it is a key here.
     */
    private array $received = [];
    /** @var array<int, int> per connection with requests in flight: responses written, so whose turn it is */
    private array $written = [];
    /** @var array<int, array<int, Channel>> per connection: requests ready before their turn, by turn */
    private array $waiting = [];
    /** requests being answered, all connections of this worker */
    private int $inflightWorker = 0;
    /** @var array<int, true> connections whose output reached buffer_high_watermark (onBufferFull) */
    private array $outFull = [];
    /** @var array<int, true> connections with a Server::pause() scheduled for the end of this loop turn */
    private array $pausing = [];
    /**
     * @var array<int, float> this worker's connections (onConnect to onClose) and when each was
     * accepted. Kept here because Swoole's own connection iterator (and its heartbeat, which walks
     * the same range) misses connections in SWOOLE_BASE with several workers (README).
     */
    private array $connectedAt = [];
    /** @var array<int, float> connections with part of a request received: when that was first seen */
    private array $headSince = [];


    public function __construct(private Server $server, private array $c)
    {
        $this->redis = new Redises((new RedisConfig())
            ->withHost($c['REDIS_HOST'])
            ->withPort((int) $c['REDIS_PORT'])
            ->withTimeout(TIMEOUT)
            // Workaround: RedisPool's withReadTimeout() is a TypeError under strict types (README, Workarounds)
            // Not withReadTimeout(): RedisPool passes it as connect()'s 4th argument, the
            // persistent id, when no retry interval is set (a TypeError under strict types).
            ->withOption(Redis::OPT_READ_TIMEOUT, TIMEOUT), POOL_SIZE);
        $this->mysql = new Pdos((new PDOConfig())
            ->withHost($c['MYSQL_HOST'])
            ->withPort((int) $c['MYSQL_PORT'])
            ->withDbname($c['MYSQL_DATABASE'])
            ->withCharset('utf8mb4')
            ->withUsername($c['MYSQL_USER'])
            ->withPassword($c['MYSQL_PASSWORD'])
            ->withOptions([
                PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
                PDO::ATTR_TIMEOUT => max(1, (int) ceil(TIMEOUT)),
                // Server-side prepared once per connection; a request is one COM_STMT_EXECUTE.
                PDO::ATTR_EMULATE_PREPARES => false,
            ]), POOL_SIZE);
        $this->memcache = new Memcaches(
            fn() => new MemcacheConnection($c['MEMCACHE_HOST'], (int) $c['MEMCACHE_PORT']), POOL_SIZE);
        $this->statements = new WeakMap();
        $this->onDeadline = $this->expire(...);
    }

    /** Opens every pool's connections now, so that none is opened while serving. */
    public function warm(): void
    {
        foreach (['redis' => $this->redis, 'mysql' => $this->mysql, 'memcache' => $this->memcache] as $name => $pool) {
            try {
                $pool->fill();
            } catch (Throwable $e) {
                // The pool opens the rest on demand (get()) once the backend answers.
                fwrite(STDERR, "php-swoole: $name: cannot connect at start: {$e->getMessage()}\n");
            }
        }
    }

    /**
     * One request's backend read, bounded by its deadline: BACKEND_TIMEOUT_MS from arrival, pool
     * wait included (nothing before this yields, so arrival is now). Redis and memcached are
     * bounded by their clients' own timeouts, each set to what is left of the deadline: the pool's
     * get($timeout), phpredis's read timeout, Coroutine\Client::recv($timeout); each is a timer
     * in Swoole's C core, set only while a wait blocks, and a wait that times out ends the
     * request's own coroutine there. mysqlnd's timeouts count whole seconds, so a MySQL request
     * gets a timer of its own instead, which at the deadline cancels the request's coroutine
     * (Coroutine::cancel with an exception): whatever it waits on (a pool slot, a connect, a
     * reply) ends at once with CanceledException. Either way nothing runs on after the 503.
     */
    private function fetch(string $path, int $id): ?string
    {
        if ($path !== '/mysql') {
            // Workaround: MySQL's deadline is a timer that cancels the coroutine (README, Workarounds)
            return $this->read($path, $id, microtime(true) + TIMEOUT);
        }
        $cid = Coroutine::getCid();
        $timer = Timer::after(TIMEOUT_MS, $this->onDeadline, $cid);
        try {
            return $this->read($path, $id, null);
        } catch (Throwable $e) {
            // PDO may wrap the cancellation (a PDOException about the failed read,
            // CanceledException as its previous): the deadline is what happened.
            throw isset($this->expired[$cid]) ? new Unavailable('no answer within the deadline', 0, $e) : $e;
        } finally {
            if (isset($this->expired[$cid])) {
                unset($this->expired[$cid]);
            } else {
                Timer::clear($timer);
            }
        }
    }

    /** The timer of a MySQL request's deadline: ends whatever its coroutine is waiting on. */
    public function expire(int $cid): void
    {
        $this->expired[$cid] = true;
        Coroutine::cancel($cid, true);
    }

    /**
     * The read on a connection of the endpoint's pool, by $deadline (microtime), or for MySQL
     * ($deadline null) until fetch()'s timer cancels it: then the wait for a free connection has
     * no timeout of its own (that would be a second timer). The connection goes back to the pool
     * after a success or an error the backend answered with (BackendError: the connection is in
     * step); after anything else it is closed and dropped, so a late reply can never be read as
     * the answer to a later request, and after a connection-level failure other than the deadline
     * the pool's idle connections are dropped too.
     */
    private function read(string $path, int $id, ?float $deadline): ?string
    {
        $pool = match ($path) {
            '/redis' => $this->redis,
            '/mysql' => $this->mysql,
            default => $this->memcache,
        };
        try {
            $conn = $deadline === null ? $pool->get() : $pool->get(TIMEOUT); // arrival was just now
        } catch (CanceledException $e) {
            throw $e;
        } catch (Throwable $e) {
            // get() opened a connection (the pool had fewer than its size) and that failed.
            throw $e instanceof PDOException && !mysql_unavailable($e)
                ? new BackendError('connect: ' . $e->getMessage(), 0, $e)
                : new Unavailable('connect: ' . $e->getMessage(), 0, $e);
        }
        if ($conn === false) {
            throw new Unavailable('no free connection');
        }
        // Workaround: a timeout of 0 is none to Swoole's sockets (README, Workarounds)
        // A timeout of 0 or less would be none at all to Swoole's sockets (socket.cc, TimerController).
        $left = $deadline === null ? INF : $deadline - microtime(true);
        if ($left <= 0) {
            $pool->put($conn);
            throw new Unavailable('no answer within the deadline');
        }
        try {
            $value = match ($path) {
                '/redis' => redis_get($conn, "greeting:$id", $left),
                '/mysql' => $this->select($conn, $id),
                default => $conn->get("greeting:$id", $deadline),
            };
        } catch (BackendError $e) {
            $pool->put($conn);
            throw $e;
        } catch (Throwable $e) {
            $deadlinePassed = $deadline === null
                ? Coroutine::isCanceled()
                : microtime(true) >= $deadline - TIMER_SLACK;
            $pool->discard();
            if (!$conn instanceof PDOProxy) {
                $conn->close(); // a PDO connection closes when its last reference goes
            }
            if ($e instanceof Unavailable && !$deadlinePassed) {
                // Refused, reset or closed (not the deadline: a slow backend's idle connections are fine).
                $pool->discardIdle();
            }
            throw $e;
        }
        $pool->put($conn);
        return $value;
    }

    /**
     * The SELECT on the PDO object inside Swoole's PDOProxy, not through the proxy: the proxy
     * retries a statement once on a fresh connection when the error looks like a lost connection
     * (DetectsLostConnections, which also matches "timed out"), which would be a second SELECT,
     * after the 503; and its check calls mb_strpos(), which fails without ext-mbstring (README).
     */
    private function select(object $proxy, int $id): ?string
    {
        // Workaround: PDOProxy retries on a timeout and needs mb_strpos() (README, Workarounds)
        $pdo = $proxy->__getObject();
        try {
            $stmt = $this->statements[$pdo] ??= $pdo->prepare('SELECT id, message FROM greeting WHERE id = ?');
            $stmt->bindValue(1, $id, PDO::PARAM_INT);
            $stmt->execute();
            $row = $stmt->fetch(PDO::FETCH_NUM);
            $stmt->closeCursor();
        } catch (PDOException $e) {
            throw mysql_unavailable($e)
                ? new Unavailable('mysql: ' . $e->getMessage(), 0, $e)
                : new BackendError('mysql: ' . $e->getMessage(), 0, $e);
        }
        return $row === false ? null : $row[1];
    }

    /** @return array{int, string, string} status, content type, body */
    private function route(Request $req): array
    {
        $path = $req->server['request_uri'] ?? '/';
        if (!isset(ROUTES[$path])) {
            return [404, TEXT, ERRORS[404]];
        }
        $method = $req->server['request_method'] ?? '';
        if ($method !== 'GET' && $method !== 'HEAD') {
            return [405, TEXT, ERRORS[405]];
        }
        if ($path === '/hello') {
            return [200, TEXT, 'Hello, World!'];
        }
        if ($path === '/sleep') {
            Coroutine::sleep(0.01); // yields: the worker serves other requests meanwhile
            return [200, TEXT, 'Slept 10 ms'];
        }
        $id = parse_id($req->server['query_string'] ?? '');
        if ($id === null) {
            return [400, TEXT, ERRORS[400]];
        }
        try {
            $message = $this->fetch($path, $id);
        } catch (Unavailable $e) {
            fwrite(STDERR, "php-swoole: $path?id=$id: backend unavailable: {$e->getMessage()}\n");
            return [503, TEXT, ERRORS[503]];
        } catch (BackendError $e) {
            fwrite(STDERR, "php-swoole: $path?id=$id: backend error: {$e->getMessage()}\n");
            return [500, TEXT, ERRORS[500]];
        } catch (Throwable $e) {
            fwrite(STDERR, "php-swoole: $path?id=$id: $e\n");
            return [500, TEXT, ERRORS[500]];
        }
        return $message === null ? [404, TEXT, ERRORS[404]] : [200, JSON, greeting_json($id, $message)];
    }

    public function handle(Request $req, Response $res): void
    {
        $fd = $req->fd;
        $turn = $this->received[$fd] ?? 0;
        // Workaround: max_coroutine is no bound: requests in flight per worker are (README, Workarounds)
        if ($turn !== 0 && $this->inflightWorker >= self::MAX_INFLIGHT_WORKER) {
            $res->close();
            return;
        }
        $this->received[$fd] = $turn + 1;
        $this->inflightWorker++;
        // Workaround: Swoole lifts a pause when the output drains: paused again here (README, Workarounds)
        // $turn + 1 bounds the connection's requests in flight: the exact count only when it may matter.
        if ($turn + 1 >= self::MAX_INFLIGHT && $this->inflight($fd) >= self::MAX_INFLIGHT) {
            $this->throttle($fd);
        }
        try {
            $this->answer($req, $res, $fd, $turn);
        } finally {
            $this->inflightWorker--;
            $this->advance($fd, $turn);
        }
    }

    /** Requests received on the connection and not yet answered. */
    private function inflight(int $fd): int
    {
        return ($this->received[$fd] ?? 0) - ($this->written[$fd] ?? 0);
    }

    /**
     * The response of the request with this turn is written (or the request ended without one):
     * the next request on the connection may write its own; wakes it if it is waiting.
     */
    private function advance(int $fd, int $turn): void
    {
        $next = $turn + 1;
        $received = $this->received[$fd];
        if ($next === $received) {
            // Nothing else in flight on this connection: the common case, one request at a time.
            unset($this->received[$fd], $this->written[$fd]);
            return;
        }
        $this->written[$fd] = $next;
        if (isset($this->waiting[$fd][$next])) {
            $ready = $this->waiting[$fd][$next];
            unset($this->waiting[$fd][$next]);
            if ($this->waiting[$fd] === []) {
                unset($this->waiting[$fd]);
            }
            $ready->push(true);
        }
        if ($received - $next === self::RESUME_INFLIGHT) {
            $this->unthrottle($fd);
        }
    }

    // Workaround: Swoole has no limit on the request line or head below 64 KiB (README, Workarounds)
    /**
     * 414 or 431 for a request line or head over the contract's limits, from the raw request
     * Swoole hands over (Request::getData(): the head as received, then the body); else 0.
     */
    private function refusal(Request $req): int
    {
        $data = $req->getData();
        if (!is_string($data) || strlen($data) <= MAX_REQUEST_LINE) {
            return 0; // within both limits, however it is split: the common case, no scan
        }
        $line = strpos($data, "\r\n");
        if ($line === false) {
            return 0; // Swoole dispatches only complete heads: not reached
        }
        if ($line > MAX_REQUEST_LINE) {
            return 414;
        }
        $head = strpos($data, "\r\n\r\n", $line);
        return $head === false || $head + 4 > MAX_HEAD ? 431 : 0;
    }

    private function answer(Request $req, Response $res, int $fd, int $turn): void
    {
        $refused = $this->refusal($req);
        if ($refused !== 0) {
            [$status, $type, $body] = [$refused, TEXT, ERRORS[$refused]];
        } else {
            try {
                [$status, $type, $body] = $this->route($req);
            } catch (Throwable $e) {
                fwrite(STDERR, "php-swoole: $e\n");
                [$status, $type, $body] = [500, TEXT, ERRORS[500]];
            }
        }
        // Workaround: Swoole drops the bytes after a request body (README, Workarounds)
        // After a refusal, and after any request that had a body, the connection is closed: Swoole
        // drops whatever it had received beyond a body (src/server/port.cc, "discard the redundant
        // data"), so a request pipelined behind one would never be answered (README).
        $close = $refused !== 0 || isset($req->header['transfer-encoding'])
            || (($req->header['content-length'] ?? '0') !== '0');
        // Pipelined requests on one connection run as concurrent coroutines; their responses must
        // still go out in request order. A request whose turn has not come (one before it on its
        // connection is not answered yet) waits to be woken by advance(); one request at a time
        // on a connection, the common case, never waits.
        if (($this->written[$fd] ?? 0) !== $turn) {
            $ready = new Channel(1);
            $this->waiting[$fd][$turn] = $ready;
            $ready->pop();
        }
        if ($status !== 200) { // a Response is a 200 unless told otherwise
            $res->status($status);
        }
        // Workaround: Swoole's default Server and Content-Type headers (README, Workarounds)
        // Replaces Swoole's own `Server: swoole-http-server` and default text/html Content-Type;
        // Swoole adds Date, Connection and (from end()) Content-Length.
        $res->header('Server', 'php-swoole');
        $res->header('Content-Type', $type);
        if ($status === 405) {
            $res->header('Allow', 'GET, HEAD');
        }
        if ($close) {
            $res->header('Connection', 'close');
        }
        if ($req->server['request_method'] === 'HEAD') {
            // Workaround: Swoole sends a HEAD response's body (README, Workarounds)
            // Swoole would send the body of a HEAD response: send the headers, with GET's length.
            $res->header('Content-Length', (string) strlen($body));
            $res->end();
        } else {
            $res->end($body);
        }
        if ($close) {
            // Queued behind the response when it is not written yet (BaseFactory::end).
            $this->server->close($fd);
        }
    }

    // ---- back-pressure: stop reading from a client whose answers back up

    // Workaround: Server::pause() inside the read callback re-dispatches a request (README, Workarounds)
    /**
     * Stops reading from the connection at the end of this turn of the event loop: Server::pause()
     * inside the reactor's read callback would leave the requests parsed after this one half
     * consumed (src/server/port.cc re-reads them), so it is deferred until the callback returned.
     */
    private function throttle(int $fd): void
    {
        if (isset($this->pausing[$fd])) {
            return;
        }
        $this->pausing[$fd] = true;
        Event::defer(function () use ($fd) {
            unset($this->pausing[$fd]);
            if (isset($this->outFull[$fd]) || $this->inflight($fd) >= self::MAX_INFLIGHT) {
                $this->server->pause($fd);
            }
        });
    }

    private function unthrottle(int $fd): void
    {
        if (!isset($this->outFull[$fd]) && $this->inflight($fd) <= self::RESUME_INFLIGHT) {
            $this->server->resume($fd);
        }
    }

    /** onBufferFull: the connection's unsent output reached buffer_high_watermark. */
    public function bufferFull(int $fd): void
    {
        $this->outFull[$fd] = true;
        $this->throttle($fd);
    }

    /** onBufferEmpty: it drained to buffer_low_watermark. */
    public function bufferEmpty(int $fd): void
    {
        unset($this->outFull[$fd]);
        $this->unthrottle($fd);
    }

    public function connected(int $fd): void
    {
        $this->connectedAt[$fd] = microtime(true);
    }

    public function closed(int $fd): void
    {
        unset($this->outFull[$fd], $this->connectedAt[$fd], $this->headSince[$fd]);
    }

    // ---- head and idle timeouts (README, "Protocol hygiene")

    // Workaround: Swoole has no head timeout; its heartbeat misses connections in SWOOLE_BASE (README, Workarounds)
    /**
     * Runs every SWEEP_MS in each worker, over this worker's connections, with what Swoole knows
     * of each (getClientInfo()).
     *
     * Head: a connection holds part of a request when Swoole received bytes on it after the last
     * request it dispatched (last_recv_time > last_dispatch_time, or after onConnect on a new one)
     * and has no request in flight and no unsent output. Counted from the first sweep that sees it
     * so (the latest its first byte can have come), it gets 408 and is closed after HEAD_TIMEOUT,
     * however slowly the bytes keep coming. Swoole has no such timeout.
     *
     * Idle: a connection with no request in flight that has neither received a byte nor sent an
     * answer for IDLE_TIMEOUT is closed. (Swoole's heartbeat would count received bytes only, and
     * misses connections in SWOOLE_BASE with several workers.)
     */
    public function sweep(): void
    {
        $now = microtime(true);
        foreach ($this->connectedAt as $fd => $at) {
            $info = $this->server->getClientInfo($fd);
            if ($info === false) {
                unset($this->connectedAt[$fd], $this->headSince[$fd]);
                continue;
            }
            if (isset($this->received[$fd])) {
                unset($this->headSince[$fd]);
                continue;
            }
            $since = $info['last_dispatch_time'] > 0 ? $info['last_dispatch_time'] : $at;
            if ($info['last_recv_time'] <= $since || $info['send_queued_bytes'] > 0 || isset($this->outFull[$fd])) {
                unset($this->headSince[$fd]);
                if ($now - max($info['last_recv_time'], $info['last_send_time']) >= IDLE_TIMEOUT) {
                    $this->server->close($fd);
                }
                continue;
            }
            $first = $this->headSince[$fd] ??= $info['last_recv_time'];
            if ($now - $first >= HEAD_TIMEOUT) {
                unset($this->headSince[$fd]);
                $res = Response::create($this->server, $fd);
                if ($res !== false) {
                    $res->status(408);
                    $res->header('Server', 'php-swoole');
                    $res->header('Content-Type', TEXT);
                    $res->header('Connection', 'close');
                    $res->end(ERRORS[408]);
                }
                $this->server->close($fd);
            }
        }
    }
}

// Workaround: Swoole warns about each curl hook without ext-curl (README, Workarounds)
// Every blocking function of PHP yields the coroutine instead (curl's hooks only when ext-curl
// is there: Swoole warns about each missing curl function otherwise).
$hooks = SWOOLE_HOOK_ALL;
if (!extension_loaded('curl')) {
    $hooks &= ~(SWOOLE_HOOK_CURL | SWOOLE_HOOK_NATIVE_CURL);
}

// Workaround: swoole_cpu_num() counts every online CPU, not the affinity mask (README, Workarounds)
/** The CPUs this process may run on (its affinity mask, as `taskset` sets it), else all of them. */
function usable_cpus(): int
{
    $status = @file_get_contents('/proc/self/status');
    if ($status !== false && preg_match('/^Cpus_allowed_list:\s*(\S+)/m', $status, $m)) {
        $n = 0;
        foreach (explode(',', $m[1]) as $range) {
            $ends = explode('-', $range);
            $n += count($ends) === 2 ? (int) $ends[1] - (int) $ends[0] + 1 : 1;
        }
        if ($n > 0) {
            return $n;
        }
    }
    return swoole_cpu_num();
}

$server = new Server($config['HOST'], (int) $config['PORT'], SWOOLE_BASE);
$server->set([
    // One worker per usable core: a worker is one event loop on one thread.
    'worker_num' => $config['SWOOLE_WORKERS'] === '' ? usable_cpus() : (int) $config['SWOOLE_WORKERS'],
    'enable_coroutine' => true,
    'hook_flags' => $hooks,
    'max_coroutine' => 100000,
    'backlog' => 4096,
    // Connections per worker (SWOOLE_BASE: a worker's own descriptors; past it Swoole closes the
    // new connection and pauses accept() for a second). Each connection that has sent a request
    // holds a 64 KiB read buffer from PHP's heap (SW_BUFFER_SIZE_BIG), so this times 64 KiB must
    // fit the worker's memory_limit with the requests in flight (php.ini, README Tuning).
    'max_connection' => 10240,
    'open_tcp_nodelay' => true,
    'http_compression' => false,
    'http_parse_post' => false,
    'http_parse_cookie' => false,
    'http_parse_files' => false,
    'log_level' => SWOOLE_LOG_WARNING,
    'max_wait_time' => 1,
    // Protocol hygiene (README): no reads from a client whose answers back up (onBufferFull).
    'buffer_high_watermark' => 64 * 1024,
    'buffer_low_watermark' => 0,
]);

$app = null;
$server->on('workerStart', static function (Server $server, int $workerId) use (&$app, $config) {
    $app = new App($server, $config);
    // Head and idle timeouts (README, "Protocol hygiene").
    Swoole\Timer::tick(SWEEP_MS, static fn() => $app->sweep());
    $app->warm();
});
$server->on('request', static function (Request $req, Response $res) use (&$app) {
    $app->handle($req, $res);
});
$server->on('connect', static function (Server $server, int $fd) use (&$app) {
    $app?->connected($fd);
});
$server->on('close', static function (Server $server, int $fd) use (&$app) {
    $app?->closed($fd);
});
$server->on('bufferFull', static function (Server $server, int $fd) use (&$app) {
    $app?->bufferFull($fd);
});
$server->on('bufferEmpty', static function (Server $server, int $fd) use (&$app) {
    $app?->bufferEmpty($fd);
});
$server->start();
