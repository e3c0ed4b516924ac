<?php
// php-swoole: the endpoint contract (shared-schema/CONTRACT.md) on Swoole's HTTP server.
//
// SWOOLE_BASE: one worker process per usable core, each accepting and serving its own
// connections on one event loop; inside a worker every request is a coroutine. With the runtime
// hooks on, phpredis and PDO (mysqlnd) yield the coroutine while they wait, and so does
// Coroutine::sleep(): /sleep holds no worker. Each worker keeps one pool per backend (src/Pool.php
// on Swoole's ConnectionPool), filled at start. The pieces are in src/, one concern each.
declare(strict_types=1);

require __DIR__ . '/src/Config.php';
require __DIR__ . '/src/Errors.php';
require __DIR__ . '/src/Http.php';
require __DIR__ . '/src/Id.php';
require __DIR__ . '/src/Pool.php';
require __DIR__ . '/src/RedisBackend.php';
require __DIR__ . '/src/MysqlBackend.php';
require __DIR__ . '/src/MemcacheClient.php';
require __DIR__ . '/src/MemcacheBackend.php';
require __DIR__ . '/src/Greetings.php';
require __DIR__ . '/src/Refusals.php';
require __DIR__ . '/src/RequestValidity.php';
require __DIR__ . '/src/Ordering.php';
require __DIR__ . '/src/Sweep.php';
require __DIR__ . '/src/Handler.php';

use App\{Config, Greetings, Handler, Http, MemcacheBackend, MysqlBackend, Ordering, RedisBackend, Sweep};
use Swoole\Coroutine;
use Swoole\Http\Request;
use Swoole\Http\Response;
use Swoole\Http\Server;
use Swoole\Timer;

$config = Config::fromEnvironment();

// Workaround: Swoole warns about each curl hook without ext-curl (README, Workarounds)
$hooks = SWOOLE_HOOK_ALL;
if (!extension_loaded('curl')) {
    $hooks &= ~(SWOOLE_HOOK_CURL | SWOOLE_HOOK_NATIVE_CURL);
}

$server = new Server($config->host, $config->port, SWOOLE_BASE);
$server->set([
    'worker_num' => $config->workers,       // one event loop per usable core (SWOOLE_WORKERS)
    'enable_coroutine' => true,
    'hook_flags' => $hooks,                 // every blocking call of PHP yields the coroutine instead
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
    // No reads from a client whose answers back up (onBufferFull, src/Ordering.php).
    'buffer_high_watermark' => 64 * 1024,
    'buffer_low_watermark' => 0,
]);

// This worker's pieces, made at its start (connections and coroutines belong to one process).
$handler = $ordering = $sweep = null;
$server->on('workerStart', static function (Server $server) use ($config, &$handler, &$ordering, &$sweep) {
    $greetings = new Greetings($config, new RedisBackend($config), new MysqlBackend($config), new MemcacheBackend($config));
    $routes = [
        '/hello' => static fn() => [200, Http::TEXT, 'Hello, World!'],
        '/sleep' => static function () {
            Coroutine::sleep(0.01); // yields: the worker serves other requests meanwhile
            return [200, Http::TEXT, 'Slept 10 ms'];
        },
        '/redis' => $greetings->redis(...),
        '/mysql' => $greetings->mysql(...),
        '/memcache' => $greetings->memcache(...),
    ];
    $ordering = new Ordering($server);
    $sweep = new Sweep($server, $ordering, $config->headTimeout, $config->idleTimeout);
    $handler = new Handler($server, $routes, $ordering);
    Timer::tick($config->sweepMs, $sweep->run(...)); // head and idle timeouts
    $greetings->warm();
});
// (by reference: each worker sets them at its start)
$server->on('request', static function (Request $req, Response $res) use (&$handler) {
    $handler($req, $res);
});
$server->on('connect', static function (Server $server, int $fd) use (&$sweep) {
    $sweep?->connected($fd);
});
$server->on('close', static function (Server $server, int $fd) use (&$sweep, &$ordering) {
    $sweep?->closed($fd);
    $ordering?->closed($fd);
});
$server->on('bufferFull', static function (Server $server, int $fd) use (&$ordering) {
    $ordering?->bufferFull($fd);
});
$server->on('bufferEmpty', static function (Server $server, int $fd) use (&$ordering) {
    $ordering?->bufferEmpty($fd);
});
$server->start();
