<?php
// php-swoole: the endpoint contract (shared-schema/CONTRACT.md) on Swoole's HTTP server.
//
// One worker process per core; inside a worker every request is a coroutine. With the runtime
// hooks on, phpredis and PDO (mysqlnd), which do their I/O through PHP streams, yield the
// coroutine while they wait, and so does Coroutine::sleep(): a worker serves thousands of
// requests at once and /sleep holds no worker. memcached goes through Swoole's own coroutine TCP
// client (see MemcacheConnection). Each worker keeps fixed-size pools of backend connections,
// opened at start.
declare(strict_types=1);

use Swoole\Coroutine;
use Swoole\Coroutine\Channel;
use Swoole\Coroutine\Client;
use Swoole\Event;
use Swoole\Http\Request;
use Swoole\Http\Response;
use Swoole\Http\Server;

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
// Connections per worker and backend (see README "Tuning").
const POOL_SIZE = 32;

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
define('TIMEOUT', ((int) $config['BACKEND_TIMEOUT_MS']) / 1000);
if (TIMEOUT <= 0) {
    fwrite(STDERR, "php-swoole: BACKEND_TIMEOUT_MS must be a positive number of milliseconds\n");
    exit(2);
}
foreach (['HEAD_TIMEOUT_MS', 'IDLE_TIMEOUT_MS'] as $name) {
    if ((int) $config[$name] <= 0) {
        fwrite(STDERR, "php-swoole: $name must be a positive number of milliseconds\n");
        exit(2);
    }
}
define('HEAD_TIMEOUT', ((int) $config['HEAD_TIMEOUT_MS']) / 1000);
define('IDLE_TIMEOUT', ((int) $config['IDLE_TIMEOUT_MS']) / 1000);
// How often App::sweep() looks at the connections: an eighth of the shorter limit, at most 500 ms.
define('SWEEP_MS', (int) max(20, min(500, min(HEAD_TIMEOUT, IDLE_TIMEOUT) * 1000 / 8)));
// mysqlnd only knows whole seconds; the request deadline itself is enforced by Deadline::run().
ini_set('mysqlnd.net_read_timeout', (string) max(1, (int) ceil(TIMEOUT)));

/** A backend is down, refused, or did not answer within the deadline: a 503. */
final class Unavailable extends RuntimeException {}

/**
 * A fixed-size pool on a Channel: each slot holds a connection or EMPTY (connected again on its
 * next use). Waiting for a slot counts against the request's deadline. A connection that failed,
 * or timed out, is closed and its slot emptied, so a late reply can never be read as the answer
 * to the next request.
 */
final class Pool
{
    private const EMPTY = 'empty';
    private Channel $slots;

    public function __construct(private string $name, private Closure $connect, private Closure $close, int $size)
    {
        $this->slots = new Channel($size);
        for ($i = 0; $i < $size; $i++) {
            $this->slots->push(self::EMPTY);
        }
    }

    /** Connects every slot now, concurrently, so that no connection is opened while serving. */
    public function warm(): void
    {
        $size = $this->slots->capacity;
        for ($i = 0; $i < $size; $i++) {
            $this->slots->pop(); // all EMPTY at this point
        }
        $conns = [];
        $wg = new Coroutine\WaitGroup();
        for ($i = 0; $i < $size; $i++) {
            $wg->add();
            Coroutine::create(function () use (&$conns, $wg) {
                try {
                    $conns[] = ($this->connect)(microtime(true) + TIMEOUT);
                } catch (Throwable $e) {
                    $conns[] = self::EMPTY;
                    fwrite(STDERR, "php-swoole: {$this->name}: cannot connect at start: {$e->getMessage()}\n");
                }
                $wg->done();
            });
        }
        $wg->wait();
        foreach ($conns as $conn) {
            $this->slots->push($conn);
        }
    }

    /** Runs $use(connection, deadline), waiting for a free slot no longer than the deadline. */
    public function with(float $deadline, Closure $use): mixed
    {
        $wait = $deadline - microtime(true);
        $conn = $wait > 0 ? $this->slots->pop($wait) : false;
        if ($conn === false) {
            throw new Unavailable("{$this->name}: no free connection within the deadline");
        }
        try {
            if ($conn === self::EMPTY) {
                $conn = ($this->connect)($deadline);
            }
            $result = $use($conn, $deadline);
        } catch (Throwable $e) {
            $this->slots->push(self::EMPTY);
            if ($conn !== self::EMPTY) {
                ($this->close)($conn);
            }
            if ($e instanceof Unavailable) {
                $this->discardIdle();
            }
            throw $e;
        }
        $this->slots->push($conn);
        return $result;
    }

    /**
     * After a connection-level failure every idle connection is suspect (a restarted backend has
     * closed them all): close them and let each slot connect again on its next use, instead of
     * failing one request per stale connection.
     */
    private function discardIdle(): void
    {
        $stale = [];
        for ($n = $this->slots->length(); $n > 0; $n--) {
            $conn = $this->slots->pop(0.001);
            if ($conn === false) {
                break;
            }
            if ($conn !== self::EMPTY) {
                $stale[] = $conn;
            }
            $this->slots->push(self::EMPTY);
        }
        foreach ($stale as $conn) {
            ($this->close)($conn);
        }
    }
}

/**
 * Runs an operation in its own coroutine and waits for it no longer than the deadline. Used for
 * MariaDB, whose client (mysqlnd) has timeouts in whole seconds only: the request answers 503 at
 * the deadline, and the operation finishes (or times out) on its own and then frees its pool slot.
 */
final class Deadline
{
    public static function run(float $deadline, Closure $op): mixed
    {
        $result = new Channel(1);
        Coroutine::create(static function () use ($result, $op) {
            try {
                $result->push([true, $op()]);
            } catch (Throwable $e) {
                $result->push([false, $e]);
            }
        });
        $wait = $deadline - microtime(true);
        $got = $wait > 0 ? $result->pop($wait) : false;
        if ($got === false) {
            throw new Unavailable('no answer within the deadline');
        }
        if (!$got[0]) {
            throw $got[1];
        }
        return $got[1];
    }
}

/**
 * memcached's text protocol over Swoole's coroutine TCP client: one `get`, the reply read until
 * it is complete, every read bounded by the request's deadline. (libmemcached, behind
 * php-memcached, does its own socket I/O that Swoole cannot hook; php-memcache reports a timed-out
 * get as a miss and then silently marks the server failed.)
 */
final class MemcacheConnection
{
    private Client $client;

    public function __construct(string $host, int $port, float $deadline)
    {
        $this->client = new Client(SWOOLE_SOCK_TCP);
        $this->client->set(['open_tcp_nodelay' => true]);
        if (!$this->client->connect($host, $port, max(0.001, $deadline - microtime(true)))) {
            throw new Unavailable("memcached: connect: {$this->client->errMsg}");
        }
    }

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

/** {"id":N,"message":"..."}: only `"` and `\` are escaped, everything else is raw UTF-8. */
function greeting_json(int $id, string $message): string
{
    return '{"id":' . $id . ',"message":"' . strtr($message, ['\\' => '\\\\', '"' => '\\"']) . '"}';
}

final class App
{
    private Pool $redis;
    private Pool $mysql;
    private Pool $memcache;
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

    /** @var array<int, Channel> per connection: the request whose response goes out last */
    private array $last = [];
    /** @var array<int, int> per connection: requests being answered */
    private array $inflight = [];
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
        $this->redis = new Pool('redis', function (float $deadline) {
            $r = new Redis();
            $t = max(0.001, $deadline - microtime(true));
            $r->connect($this->c['REDIS_HOST'], (int) $this->c['REDIS_PORT'], $t, null, 0, $t);
            return $r;
        }, static fn(Redis $r) => $r->close(), POOL_SIZE);

        $this->mysql = new Pool('mysql', function (float $deadline) {
            $pdo = new PDO(
                "mysql:host={$this->c['MYSQL_HOST']};port={$this->c['MYSQL_PORT']};dbname={$this->c['MYSQL_DATABASE']};charset=utf8mb4",
                $this->c['MYSQL_USER'],
                $this->c['MYSQL_PASSWORD'],
                [
                    PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
                    PDO::ATTR_TIMEOUT => max(1, (int) ceil(TIMEOUT)),
                    // Server-side prepared once per connection; a request is one COM_STMT_EXECUTE.
                    PDO::ATTR_EMULATE_PREPARES => false,
                ]
            );
            return [$pdo, $pdo->prepare('SELECT id, message FROM greeting WHERE id = ?')];
        }, static function (array $conn) {
            // Dropping the last references closes the connection.
        }, POOL_SIZE);

        $this->memcache = new Pool('memcache', fn(float $deadline) =>
            new MemcacheConnection($this->c['MEMCACHE_HOST'], (int) $this->c['MEMCACHE_PORT'], $deadline),
            static fn(MemcacheConnection $m) => $m->close(), POOL_SIZE);
    }

    public function warm(): void
    {
        $wg = new Coroutine\WaitGroup();
        foreach ([$this->redis, $this->mysql, $this->memcache] as $pool) {
            $wg->add();
            Coroutine::create(static function () use ($pool, $wg) {
                $pool->warm();
                $wg->done();
            });
        }
        $wg->wait();
    }

    private function fetch(string $path, int $id, float $deadline): ?string
    {
        switch ($path) {
            case '/redis':
                return $this->redis->with($deadline, static function (Redis $r, float $deadline) use ($id) {
                    // The read timeout is what is left of the request's deadline after the pool wait.
                    $r->setOption(Redis::OPT_READ_TIMEOUT, max(0.001, $deadline - microtime(true)));
                    try {
                        $v = $r->get("greeting:$id");
                    } catch (RedisException $e) {
                        throw new Unavailable('redis: ' . $e->getMessage(), 0, $e);
                    }
                    return $v === false ? null : $v;
                });
            case '/mysql':
                return Deadline::run($deadline, fn() => $this->mysql->with($deadline,
                    static function (array $conn) use ($id) {
                        [, $stmt] = $conn;
                        try {
                            $stmt->bindValue(1, $id, PDO::PARAM_INT);
                            $stmt->execute();
                            $row = $stmt->fetch(PDO::FETCH_NUM);
                            $stmt->closeCursor();
                        } catch (PDOException $e) {
                            throw new Unavailable('mysql: ' . $e->getMessage(), 0, $e);
                        }
                        return $row === false ? null : $row[1];
                    }));
            default:
                return $this->memcache->with($deadline,
                    static fn(MemcacheConnection $m, float $deadline) => $m->get("greeting:$id", $deadline));
        }
    }

    /** @return array{int, string, string} status, content type, body */
    private function route(Request $req, float $started): array
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
            $message = $this->fetch($path, $id, $started + TIMEOUT);
        } catch (Unavailable|RedisException|PDOException $e) {
            fwrite(STDERR, "php-swoole: $path?id=$id: backend unavailable: {$e->getMessage()}\n");
            return [503, TEXT, ERRORS[503]];
        } catch (Throwable $e) {
            fwrite(STDERR, "php-swoole: $path?id=$id: $e\n");
            return [500, TEXT, ERRORS[500]];
        }
        return $message === null ? [404, TEXT, ERRORS[404]] : [200, JSON, greeting_json($id, $message)];
    }

    public function handle(Request $req, Response $res): void
    {
        $started = microtime(true);
        $fd = $req->fd;
        $inflight = ($this->inflight[$fd] ?? 0) + 1;
        if ($inflight > 1 && $this->inflightWorker >= self::MAX_INFLIGHT_WORKER) {
            $res->close();
            return;
        }
        $this->inflight[$fd] = $inflight;
        $this->inflightWorker++;
        if ($inflight >= self::MAX_INFLIGHT) {
            $this->throttle($fd);
        }
        try {
            $this->answer($req, $res, $fd, $started);
        } finally {
            $this->inflightWorker--;
            $left = --$this->inflight[$fd];
            if ($left === 0) {
                unset($this->inflight[$fd]);
            }
            if ($left === self::RESUME_INFLIGHT) {
                $this->unthrottle($fd);
            }
        }
    }

    /**
     * 414 or 431 for a request line or head over the contract's limits, from the raw request
     * Swoole hands over (Request::getData(): the head as received, then the body); else 0.
     */
    private function refusal(Request $req): int
    {
        $data = $req->getData();
        if (!is_string($data)) {
            return 0;
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

    private function answer(Request $req, Response $res, int $fd, float $started): void
    {
        // Pipelined requests on one connection run as concurrent coroutines; their responses
        // must still go out in request order: each waits for the one before it on its connection.
        $before = $this->last[$fd] ?? null;
        $mine = new Channel(1);
        $this->last[$fd] = $mine;
        $refused = $this->refusal($req);
        if ($refused !== 0) {
            [$status, $type, $body] = [$refused, TEXT, ERRORS[$refused]];
        } else {
            try {
                [$status, $type, $body] = $this->route($req, $started);
            } catch (Throwable $e) {
                fwrite(STDERR, "php-swoole: $e\n");
                [$status, $type, $body] = [500, TEXT, ERRORS[500]];
            }
        }
        // After a refusal, and after any request that had a body, the connection is closed: Swoole
        // drops whatever it had received beyond a body (src/server/port.cc, "discard the redundant
        // data"), so a request pipelined behind one would never be answered (README).
        $close = $refused !== 0 || isset($req->header['transfer-encoding'])
            || (($req->header['content-length'] ?? '0') !== '0');
        if ($before !== null) {
            $before->pop();
        }
        $res->status($status);
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
        $mine->push(true);
        if (($this->last[$fd] ?? null) === $mine) {
            unset($this->last[$fd]);
        }
    }

    // ---- back-pressure: stop reading from a client whose answers back up

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
            if (isset($this->outFull[$fd]) || ($this->inflight[$fd] ?? 0) >= self::MAX_INFLIGHT) {
                $this->server->pause($fd);
            }
        });
    }

    private function unthrottle(int $fd): void
    {
        if (!isset($this->outFull[$fd]) && ($this->inflight[$fd] ?? 0) <= self::RESUME_INFLIGHT) {
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
            if (isset($this->inflight[$fd])) {
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

// Every blocking function of PHP yields the coroutine instead (curl's hooks only when ext-curl
// is there: Swoole warns about each missing curl function otherwise).
$hooks = SWOOLE_HOOK_ALL;
if (!extension_loaded('curl')) {
    $hooks &= ~(SWOOLE_HOOK_CURL | SWOOLE_HOOK_NATIVE_CURL);
}

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
    'worker_num' => usable_cpus(),
    'enable_coroutine' => true,
    'hook_flags' => $hooks,
    'max_coroutine' => 100000,
    'backlog' => 4096,
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
