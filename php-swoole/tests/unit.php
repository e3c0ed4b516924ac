<?php
// The stack's unit tests: plain PHP assertions, no services, no network (make unit STACK=php-swoole).
// Every hand-written parser and protocol piece: the id of a query string (every form of
// shared-schema/cases.json and malformed ones), the memcached reply parser, the request-size
// refusals and the response writer, the Redis and MariaDB error rules, the pool's replacement
// rules (in coroutines), the configuration.
declare(strict_types=1);

foreach (glob(__DIR__ . '/../src/*.php') as $file) {
    require $file;
}

use App\{BackendError, Config, Greetings, Http, Id, MemcacheClient, MysqlBackend, Pool, RedisBackend, Refusals, RequestValidity,
         Unavailable};

$failures = 0;
$checks = 0;
function ok(bool $condition, string $what): void
{
    global $failures, $checks;
    $checks++;
    if (!$condition) {
        $failures++;
        fwrite(STDERR, "FAIL: $what\n");
    }
}
/** The exception class $f throws, or 'none'. */
function throws(callable $f): string
{
    try {
        $f();
    } catch (Throwable $e) {
        return $e::class;
    }
    return 'none';
}

// ---- Id::parse: every data-endpoint target of cases.json
$cases = json_decode(file_get_contents(__DIR__ . '/../../shared-schema/cases.json'), true, flags: JSON_THROW_ON_ERROR);
$seen = 0;
foreach ($cases['cases'] as $case) {
    $parts = explode('?', $case['target'], 2);
    if (!in_array($parts[0], ['/redis', '/mysql', '/memcache'], true) || !in_array($case['method'], ['GET', 'HEAD'], true)) {
        continue;
    }
    $seen++;
    $id = Id::parse($parts[1] ?? '');
    $status = $case['expect']['status'];
    if ($status === 400) {
        ok($id === null, "Id::parse rejects {$case['target']}");
    } elseif ($status === 200 && $case['expect']['body'] !== '') {
        $body = json_decode($case['expect']['body'], true, flags: JSON_THROW_ON_ERROR);
        ok($id === $body['id'], "Id::parse({$case['target']}) is {$body['id']}");
    } else {
        ok($id !== null && $id >= 1, "Id::parse accepts {$case['target']} (status $status)");
    }
}
ok($seen >= 60, "cases.json has the data endpoints' cases ($seen)");
foreach (['id=1' => 1, 'id=999999999' => 999999999, 'id=%34%32' => 42, 'x=1&id=42&y=' => 42, 'id=42&x' => 42,
          'x&id=7' => 7, '%69d=5' => 5, 'id=5&ID=6' => 5] as $query => $want) {
    ok(Id::parse((string) $query) === $want, "Id::parse($query) is $want");
}
foreach (['', 'id', 'id=', 'id=0', 'id=00', 'id=01', 'id=-1', 'id=+1', 'id=%2B1', 'id=1e3', 'id=0x1', 'id=1.0',
          'id=1234567890', 'id=1&id=2', 'id=1&id=1', 'id=1%20', 'id=%201', 'id= 1', 'id=%zz', 'ID=1', 'id=１',
          'id=1%00', 'id[]=1', 'id=abc', 'x=1', '&', 'id=1=1', 'id=9999999999999999999999'] as $query) {
    ok(Id::parse($query) === null, "Id::parse rejects '$query'");
}

// ---- MemcacheClient::reply: the reply to one get, as the bytes arrive
$value = "a\r\nEND\r\nb /\u{1F389}";
$full = 'VALUE greeting:1 0 ' . strlen($value) . "\r\n$value\r\nEND\r\n";
for ($i = 0; $i < strlen($full); $i++) {
    ok(MemcacheClient::reply(substr($full, 0, $i)) === false, "memcached: $i bytes of a VALUE reply are incomplete");
}
ok(MemcacheClient::reply($full) === $value, 'memcached: a value that holds \r\nEND\r\n is read by its length');
ok(MemcacheClient::reply("VALUE k 0 0\r\n\r\nEND\r\n") === '', 'memcached: an empty value');
ok(MemcacheClient::reply("VALUE k 5 3 77\r\nabc\r\nEND\r\n") === 'abc', 'memcached: a VALUE line with a cas');
ok(MemcacheClient::reply("END\r\n") === null, 'memcached: END is a miss');
ok(MemcacheClient::reply('END') === false && MemcacheClient::reply("END\r") === false, 'memcached: a partial END');
ok(throws(fn() => MemcacheClient::reply("SERVER_ERROR out of memory\r\n")) === BackendError::class, 'memcached: SERVER_ERROR');
ok(throws(fn() => MemcacheClient::reply("CLIENT_ERROR bad command line format\r\n")) === BackendError::class, 'memcached: CLIENT_ERROR');
ok(throws(fn() => MemcacheClient::reply("ERROR\r\n")) === BackendError::class, 'memcached: ERROR');
foreach (["STORED\r\n", "VALUE k 0\r\n", "VALUE k 0 x\r\nabc\r\nEND\r\n", "VALUE k 0 -1\r\n", "VALUE k 0 3 1 2\r\n",
          "VALUE k 0 \r\n", "VALUE k 0 3\r\nabcXXEND\r\n", "VALUE k 0 3\r\nabc\r\nEND\r\nEND\r\n", "END\r\nVALUE",
          "value k 0 3\r\nabc\r\nEND\r\n"] as $reply) {
    ok(throws(fn() => MemcacheClient::reply($reply)) === RuntimeException::class,
        'memcached: out of step on ' . json_encode($reply));
}

// ---- Refusals::status: the contract's sizes, on the raw request Swoole hands over
$req = fn(int $line, int $head, string $body = '') =>
    'GET /' . str_repeat('a', $line - 14) . " HTTP/1.1\r\n" . 'X: ' . str_repeat('b', $head - $line - 9) . "\r\n\r\n" . $body;
ok(strlen(explode("\r\n", $req(8192, 9000))[0]) === 8192 && strlen($req(8192, 9000)) === 9000, 'the request builder');
ok(Refusals::status(false) === 0 && Refusals::status("GET / HTTP/1.1\r\n\r\n") === 0, 'a small request is served');
ok(Refusals::status($req(8192, 16384)) === 0, 'a request line of 8,192 bytes and a head of 16,384 are served');
ok(Refusals::status($req(8193, 9000)) === 414, 'a request line of 8,193 bytes is 414');
ok(Refusals::status($req(60000, 60100)) === 414, 'a request line of 60,000 bytes is 414');
ok(Refusals::status($req(100, 16385)) === 431, 'a head of 16,385 bytes is 431');
ok(Refusals::status($req(100, 9000, str_repeat('c', 20000))) === 0, 'a body does not count toward the head');

// ---- RequestValidity::check: the validity cases Swoole hands to PHP (its reactor and llhttp refuse
// the others with their own 400: unknown methods, other versions, raw bytes, obs-fold, field lines)
/**
 * What Swoole passes for these bytes: method, request_uri (no query), server_protocol, the last Host
 * line's value in the head (http_request_on_header_value: zend_hash_update), getData().
 */
function validity(string $data): int|string
{
    $head = substr($data, 0, strpos($data, "\r\n\r\n") + 2);
    [$method, $target, $version] = explode(' ', substr($head, 0, strpos($head, "\r\n")), 3);
    $host = preg_match_all('/\r\nhost:[ \t]*(.*?)[ \t]*\r\n/i', $head, $m) > 0 ? end($m[1]) : null;
    return RequestValidity::check($method, explode('?', $target, 2)[0], $version, $host, $data);
}
function request(string $line, ?string $host = 'verify', string $more = '', string $body = ''): string
{
    return "$line\r\n" . ($host === null ? '' : "Host: $host\r\n") . "$more\r\n$body";
}
$hello = 'GET /hello HTTP/1.1';
foreach (['HTTP/1.1 without Host' => [request($hello, null), 400],
          'two Host lines, the same value' => [request($hello, more: "Host: verify\r\n"), 400],
          'two Host lines, different values' => [request($hello, more: "Host: other\r\n"), 400],
          'two Host lines, the second in another case' => [request($hello, more: "hOST: verify\r\n"), 400],
          'Host with userinfo (user@verify)' => [request($hello, 'user@verify'), 400],
          'Host with a path (verify/x)' => [request($hello, 'verify/x'), 400],
          'Host holding a list (verify, other)' => [request($hello, 'verify, other'), 400],
          'Host holding a list without a space (verify,other)' => [request($hello, 'verify,other'), 400],
          'an empty Host' => [request($hello, ''), 400],
          'a Host of spaces' => [request($hello, '  '), 400],
          'Host with a port only (:8080)' => [request($hello, ':8080'), 400],
          'Host with a non-digit port (verify:x)' => [request($hello, 'verify:x'), 400],
          'Host with a bad IPv6 literal ([::g])' => [request($hello, '[::g]:8080'), 400],
          'Host with an unclosed IPv6 literal ([::1)' => [request($hello, '[::1'), 400],
          'Host with a bad percent-escape (ver%zify)' => [request($hello, 'ver%zify'), 400],
          'Host with a port (verify:8080)' => [request($hello, 'verify:8080'), '/hello'],
          'Host as an IPv6 literal ([::1]:8080)' => [request($hello, '[::1]:8080'), '/hello'],
          'Host as an IPv6 literal without a port ([2001:db8::1])' => [request($hello, '[2001:db8::1]'), '/hello'],
          'Host as an IPv4 address (127.0.0.1)' => [request($hello, '127.0.0.1'), '/hello'],
          'Host (verify)' => [request($hello), '/hello'],
          'Host with an empty port (verify:)' => [request($hello, 'verify:'), '/hello'],
          'Host with a percent-escape (ver%41ify)' => [request($hello, 'ver%41ify'), '/hello'],
          'a lower-case host field name' => ["GET /hello HTTP/1.1\r\nhost: verify\r\n\r\n", '/hello'],
          'Host after other fields' => [request($hello, null, "Accept: */*\r\nX-Host: a\r\nHost: verify\r\n"), '/hello'],
          'a field ending in host is not Host' => [request($hello, null, "X-Host: verify\r\n"), 400],
          'Host: in the body is not a Host line' => [request('POST /hello HTTP/1.1', body: "a\r\nHost: other\r\n"), '/hello'],
          'Host only in the body' => [request('POST /hello HTTP/1.1', null, "Content-Length: 14\r\n", "\r\nHost: verify"), 400],
          'HTTP/1.0 without Host' => [request('GET /hello HTTP/1.0', null), '/hello'],
          'HTTP/1.0 with two Host lines' => [request('GET /hello HTTP/1.0', more: "Host: other\r\n"), 400],
          'HTTP/1.0 with an invalid Host' => [request('GET /hello HTTP/1.0', 'user@verify'), 400],
          'asterisk-form with GET (GET *)' => [request('GET * HTTP/1.1'), 400],
          'asterisk-form with OPTIONS (OPTIONS *)' => [request('OPTIONS * HTTP/1.1'), '*'],
          'authority-form with GET (GET verify:80)' => [request('GET verify:80 HTTP/1.1'), 400],
          'a target that is no form (GET hello)' => [request('GET hello HTTP/1.1'), 400],
          'absolute-form (GET http://verify/hello)' => [request('GET http://verify/hello HTTP/1.1'), '/hello'],
          'absolute-form with a query (GET http://verify/redis?id=1)' => [request('GET http://verify/redis?id=1 HTTP/1.1'), '/redis'],
          'absolute-form with a port and https (GET HTTPS://verify:8443/sleep)' => [request('GET HTTPS://verify:8443/sleep HTTP/1.1'), '/sleep'],
          'absolute-form without a path (GET http://verify)' => [request('GET http://verify HTTP/1.1'), '/'],
          'absolute-form with userinfo (GET http://u@verify/hello)' => [request('GET http://u@verify/hello HTTP/1.1'), 400],
          'absolute-form without a host (GET http:///hello)' => [request('GET http:///hello HTTP/1.1'), 400],
          'absolute-form of another scheme (GET ftp://verify/hello)' => [request('GET ftp://verify/hello HTTP/1.1'), 400],
          'absolute-form still needs Host' => [request('GET http://verify/hello HTTP/1.1', null), 400],
          'CONNECT verify:443' => [request('CONNECT verify:443 HTTP/1.1', 'verify:443'), 501],
          'CONNECT without Host' => [request('CONNECT verify:443 HTTP/1.1', null), 501],
          'POST /hello' => [request('POST /hello HTTP/1.1', more: "Content-Length: 5\r\n", body: 'hello'), '/hello'],
          'GET /redis?id=1' => [request('GET /redis?id=1 HTTP/1.1'), '/redis'],
         ] as $what => [$data, $want]) {
    $got = validity($data);
    ok($got === $want, "RequestValidity: $what is " . var_export($want, true) . ', got ' . var_export($got, true));
}

// ---- Http::write: the headers of every response
final class FakeResponse
{
    public array $calls = [];
    public function status(int $status): void { $this->calls[] = "status $status"; }
    public function header(string $name, string $value): void { $this->calls[] = "$name: $value"; }
    public function end(?string $body = null): void { $this->calls[] = 'end ' . json_encode($body); }
}
$write = function (int $status, string $type, string $body, bool $head, bool $close): array {
    $res = new FakeResponse();
    Http::write($res, $status, $type, $body, $head, $close);
    return $res->calls;
};
ok($write(200, Http::TEXT, 'Hello, World!', false, false)
    === ['Server: php-swoole', 'Content-Type: text/plain; charset=utf-8', 'end "Hello, World!"'], 'a 200');
ok($write(200, Http::JSON, '{"id":1}', true, false)
    === ['Server: php-swoole', 'Content-Type: application/json', 'Content-Length: 8', 'end null'], 'HEAD: GET\'s length, no body');
ok($write(...Http::error(405), ...[false, false])
    === ['status 405', 'Server: php-swoole', 'Content-Type: text/plain; charset=utf-8', 'Allow: GET, HEAD', 'end "Method Not Allowed"'], 'a 405 with Allow');
ok($write(...Http::error(414), ...[false, true])
    === ['status 414', 'Server: php-swoole', 'Content-Type: text/plain; charset=utf-8', 'Connection: close', 'end "URI Too Long"'], 'a refusal closes');
ok($write(408, Http::TEXT, Http::REASONS[408], false, true)[4] === 'end "Request Timeout"', 'the head timeout\'s 408');
ok(Http::error(431) === [431, Http::TEXT, 'Request Header Fields Too Large'], 'the 431 body');

// ---- Greetings::json: the contract's bytes
ok(Greetings::json(7, 'a/b "q" \\ é 🎉') === '{"id":7,"message":"a/b \"q\" \\\\ é 🎉"}', 'JSON: only " and \\ escaped');
ok(throws(fn() => Greetings::json(1, "\xff")) === JsonException::class, 'JSON: invalid UTF-8 throws');

// ---- MariaDB: which errors mean "unavailable" (503); the same set as php-fpm's
ok(MysqlBackend::UNAVAILABLE_CODES === [1040, 1053, 1927, 1969], 'MariaDB: the server codes that mean unavailable');
$pdoError = function (int $code, bool $connect = false): PDOException {
    $e = new PDOException("SQLSTATE[HY000] [$code] test", $connect ? $code : 0);
    if (!$connect) {
        $e->errorInfo = ['HY000', $code, 'test'];
    }
    return $e;
};
foreach ([1040, 1053, 1927, 1969, 2000, 2002, 2006, 2013, 2999] as $code) {
    ok(MysqlBackend::unavailable($pdoError($code)), "MariaDB $code is unavailable");
    ok(MysqlBackend::failure($pdoError($code)) instanceof Unavailable, "MariaDB $code is a 503");
}
ok(MysqlBackend::unavailable($pdoError(2002, true)), 'a failed connect carries its code in getCode()');
foreach ([1045, 1064, 1146, 1205, 1213, 1999, 3000, 1968, 1970] as $code) {
    ok(!MysqlBackend::unavailable($pdoError($code)), "MariaDB $code is not about availability");
    ok(MysqlBackend::failure($pdoError($code)) instanceof BackendError, "MariaDB $code is a 500");
}
$sqlstate = new PDOException('SQLSTATE[42S02]: Base table or view not found', 0);
$sqlstate->errorInfo = ['42S02', 1146, 'no table'];
ok(!MysqlBackend::unavailable($sqlstate), 'errorInfo[1], not the SQLSTATE, decides');

// ---- Redis: error replies (500) against "cannot serve now" and no reply (503)
foreach (['ERR unknown command', 'WRONGTYPE Operation against a key', 'NOAUTH Authentication required.', 'NOPERM', 'READONLY x'] as $error) {
    ok(RedisBackend::classify($error) instanceof BackendError, "Redis '$error' is a 500");
}
foreach (['LOADING Redis is loading', 'BUSY Redis is busy', 'MASTERDOWN Link down', 'TRYAGAIN', 'CLUSTERDOWN x',
          '', 'Connection refused', 'read error on connection', 'Err lowercase'] as $error) {
    ok(RedisBackend::classify($error) instanceof Unavailable, "Redis '$error' is a 503");
}

// ---- Config: the environment, with this stack's defaults
$env = ['HOST' => '127.0.0.1', 'PORT' => '18007', 'REDIS_HOST' => 'r', 'REDIS_PORT' => '1', 'MYSQL_HOST' => 'm',
        'MYSQL_PORT' => '2', 'MYSQL_USER' => 'u', 'MYSQL_PASSWORD' => 'p', 'MYSQL_DATABASE' => 'd', 'MEMCACHE_HOST' => 'c',
        'MEMCACHE_PORT' => '3', 'BACKEND_TIMEOUT_MS' => '1000', 'HEAD_TIMEOUT_MS' => '20000', 'IDLE_TIMEOUT_MS' => '75000'];
$c = new Config($env);
ok($c->poolSize === 32 && $c->workers >= 1 && $c->timeout === 1.0 && $c->sweepMs === 500, 'Config: defaults of the stack\'s knobs');
$c = new Config(['SWOOLE_POOL_SIZE' => '8', 'SWOOLE_WORKERS' => '3', 'HEAD_TIMEOUT_MS' => '80'] + $env);
ok($c->poolSize === 8 && $c->workers === 3 && $c->sweepMs === 20, 'Config: SWOOLE_POOL_SIZE, SWOOLE_WORKERS, the sweep interval');
foreach (['HOST' => '', 'PORT' => '70000', 'BACKEND_TIMEOUT_MS' => '0', 'HEAD_TIMEOUT_MS' => '1.5', 'SWOOLE_POOL_SIZE' => '-1',
          'SWOOLE_WORKERS' => '10000', 'MYSQL_PASSWORD' => ''] as $name => $bad) {
    ok(throws(fn() => new Config([$name => $bad] + $env)) === InvalidArgumentException::class, "Config: $name='$bad' is refused");
}
ok(Config::countCpuList('0') === 1 && Config::countCpuList('0-3,6,8-9') === 7 && Config::countCpuList('x') === 0, 'Config: CPU lists');

// ---- Pool: Swoole's ConnectionPool with the replacement rules, in coroutines
final class FakeConnection
{
    public bool $open = true;
    public function __construct(public int $n)
    {
    }
}
Swoole\Coroutine::set(['hook_flags' => 0]);
Swoole\Coroutine\run(function () {
    $made = 0;
    $refuse = false;
    $pool = new Pool(function () use (&$made, &$refuse) {
        if ($refuse) {
            throw new RuntimeException('refused');
        }
        return new FakeConnection(++$made);
    }, fn(object $c) => $c->open = false, 3);
    $pool->fill();
    ok($made === 3, 'Pool: fill() opens every connection');
    $a = $pool->get(0.1);
    $pool->broken($a, false);
    ok(!$a->open, 'Pool: a broken connection is closed at once');
    ok($made === 3, 'Pool: and not replaced in the caller of broken()');
    $seen = [];
    for ($i = 0; $i < 3; $i++) {
        $seen[] = $pool->get(0.1);
    }
    ok(!in_array($a, $seen, true) && $made === 4 && count(array_filter($seen, fn($c) => $c->open)) === 3,
        'Pool: the next get() replaces the broken connection');
    $pool->put($seen[0]);
    $pool->put($seen[1]);
    ok($pool->get(0.01) instanceof FakeConnection && $made === 4, 'Pool: connections in step are kept');
    $pool->broken($seen[2], true); // a connection-level failure: every connection opened so far is suspect
    $refuse = true;
    ok(throws(fn() => $pool->get(0.01)) === RuntimeException::class, 'Pool: a replacement that cannot connect throws in get()');
    $refuse = false;
    $fresh = [$pool->get(0.01), $pool->get(0.01)];
    ok(count(array_filter($fresh, fn($c) => $c instanceof FakeConnection && $c->n > 4)) === 2,
        'Pool: after a connection-level failure the idle connections are replaced when taken');
    ok($pool->get(0.01) === false, 'Pool: never more than its size (one is still out)');
});

// ---- MemcacheClient over a socket: a reply in pieces, no reply, a closed connection
Swoole\Coroutine\run(function () {
    $listener = new Swoole\Coroutine\Socket(AF_INET, SOCK_STREAM, 0);
    $listener->bind('127.0.0.1', 0);
    $listener->listen(8);
    $port = $listener->getsockname()['port'];
    $script = [
        fn($peer) => array_map(function ($piece) use ($peer) { $peer->sendAll($piece); Swoole\Coroutine::sleep(0.01); },
                               ["VAL", "UE greeting:5 0 5\r\nhel", "lo\r\nEN", "D\r\n"]),
        fn($peer) => Swoole\Coroutine::sleep(0.3), // never answers
        fn($peer) => $peer->close(),
    ];
    Swoole\Coroutine::create(function () use ($listener, $script) {
        foreach ($script as $step) {
            $peer = $listener->accept();
            $request = $peer->recv();
            $step($peer);
        }
    });
    $client = new MemcacheClient('127.0.0.1', $port, 1.0);
    ok($client->get('greeting:5', microtime(true) + 1) === 'hello', 'memcached client: a reply read in four pieces');
    $client = new MemcacheClient('127.0.0.1', $port, 1.0);
    $start = microtime(true);
    ok(throws(fn() => $client->get('greeting:5', microtime(true) + 0.05)) === Unavailable::class, 'memcached client: no reply is a 503');
    $took = microtime(true) - $start;
    ok($took >= 0.04 && $took < 0.25, 'memcached client: at its deadline (' . round($took * 1000) . ' ms)');
    $client->close();
    $client = new MemcacheClient('127.0.0.1', $port, 1.0);
    ok(throws(fn() => $client->get('greeting:5', microtime(true) + 1)) === Unavailable::class, 'memcached client: a closed connection is a 503');
    $listener->close();
    $unused = new Swoole\Coroutine\Socket(AF_INET, SOCK_STREAM, 0);
    $unused->bind('127.0.0.1', 0); // bound, not listening: a connect to it is refused
    $port = $unused->getsockname()['port'];
    ok(throws(fn() => new MemcacheClient('127.0.0.1', $port, 0.2)) === Unavailable::class, 'memcached client: a refused connect is a 503');
});

echo "php-swoole unit tests: $checks checks, $failures failed\n";
exit($failures === 0 ? 0 : 1);
