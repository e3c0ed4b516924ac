<?php
// The stack's unit tests, plain `php` assertions (the manifest's `test`): the hand-written pieces
// of app/lib.php, with no server and no network. Exits 1 on the first failure.
declare(strict_types=1);
require __DIR__ . '/../app/lib.php';

require __DIR__ . '/check.php';

// parse_id: every id form of the contract's cases (shared-schema/cases.json) on a data path.
$cases = json_decode(file_get_contents(__DIR__ . '/../../shared-schema/cases.json'), true, 512, JSON_THROW_ON_ERROR)['cases'];
$idCases = 0;
foreach ($cases as $case) {
    if (preg_match('#\A/(redis|mysql|memcache)\?(.*)\z#s', $case['target'], $m) !== 1 || $case['method'] === 'POST') {
        continue;
    }
    $idCases++;
    $id = parse_id($m[2]);
    $status = $case['expect']['status'];
    if ($status === 400) {
        check($id === null, "{$case['name']}: {$case['target']} must be refused, got " . var_export($id, true));
    } elseif ($status === 200 && $case['method'] === 'GET') {
        $want = json_decode($case['expect']['body'], true)['id'];
        check($id === $want, "{$case['name']}: {$case['target']} must give $want, got " . var_export($id, true));
        check(greeting_json($want, json_decode($case['expect']['body'], true)['message']) === $case['expect']['body'],
            "{$case['name']}: greeting_json gives the contract's bytes");
    } else { // HEAD, and a 404 read from the backend: the id the target names
        parse_str($m[2], $q);
        check($id === (int) $q['id'], "{$case['name']}: {$case['target']} must give {$q['id']}, got " . var_export($id, true));
    }
}
check($idCases >= 30, "cases.json has id cases ($idCases)");

// parse_id: more malformed ids, and the forms that are fine.
foreach (['', 'id', 'id=', 'id=0', 'id=00', 'id=01', 'id=-0', 'id=+1', 'id=%2B1', 'id= 1', 'id=1%20',
          'id=1+', 'id=1.0', 'id=1e3', 'id=0x1', 'id=1234567890', 'id=99999999999999999999', 'id=%zz',
          'id=%', 'id=%3', "id=\u{FF11}", 'id=1%00', 'ID=1', 'Id=1', 'id=1&id=1', 'id=1&id=2', 'ids=1',
          'id%3D1', 'id=abc', 'id=1&id'] as $query) {
    check(parse_id($query) === null, "parse_id('$query') must be null, got " . var_export(parse_id($query), true));
}
foreach (['id=1' => 1, 'id=999999999' => 999999999, 'id=%34%32' => 42, 'a=b&id=7&c' => 7, 'id=7&' => 7,
          '%69d=5' => 5, 'x=1&id=42&y=' => 42] as $query => $want) {
    check(parse_id($query) === $want, "parse_id('$query') must be $want, got " . var_export(parse_id($query), true));
}

// mysql_unavailable: exactly the client's own errors (2000-2999) and 1040, 1053, 1927, 1969 are
// "unavailable" (503); every other server error is MariaDB answering (500).
$pdoError = static function (int $code, bool $asConnect = false): PDOException {
    $e = new PDOException("error $code", $asConnect ? $code : 0);
    if (!$asConnect) {
        $e->errorInfo = ['HY000', $code, "error $code"];
    }
    return $e;
};
$unavailable = [];
for ($code = 1000; $code < 5000; $code++) {
    if (mysql_unavailable($pdoError($code))) {
        $unavailable[] = $code;
    }
}
$expected = array_merge([1040, 1053, 1927, 1969], range(2000, 2999));
check($unavailable === $expected, 'the MariaDB errors that mean unavailable: ' .
    implode(',', array_diff($unavailable, $expected)) . ' extra, ' . implode(',', array_diff($expected, $unavailable)) . ' missing');
check(in_array(1969, $unavailable, true), '1969 (max_statement_time exceeded) is unavailable');
check(mysql_unavailable($pdoError(2002, true)), 'a failed connect (code in getCode()) is unavailable');
check(!mysql_unavailable($pdoError(1045, true)), 'access denied at connect is MariaDB answering');
check(!mysql_unavailable(new PDOException('SQLSTATE[42S02]')), 'no driver code: not unavailable');

// redis_failure: an error reply is a 500 unless it says Redis cannot serve now; no reply is a 503.
final class ScriptedRedis extends Redis
{
    public function __construct(private ?string $error, private bool $throws = false) {}
    public function getLastError(): ?string
    {
        if ($this->throws) {
            throw new RedisException('Connection lost');
        }
        return $this->error;
    }
}
foreach (['LOADING Redis is loading the dataset in memory', 'BUSY Redis is busy running a script',
          'MASTERDOWN Link with MASTER is down', 'TRYAGAIN Multiple keys request', 'CLUSTERDOWN The cluster is down',
          'Connection refused', 'read error on connection', '', null] as $error) {
    check(redis_failure(new ScriptedRedis($error), null) instanceof Unavailable, 'redis ' . var_export($error, true) . ' is unavailable');
}
foreach (['ERR unknown command', 'WRONGTYPE Operation against a key', 'NOPERM this user has no permissions',
          'NOAUTH Authentication required', 'LOADINGX made up'] as $error) {
    check(redis_failure(new ScriptedRedis($error), null) instanceof BackendError, "redis '$error' is a backend error");
}
check(redis_failure(new ScriptedRedis(null, true), new RedisException('gone')) instanceof Unavailable,
    'getLastError() throwing on a lost connection is unavailable');

// The memcached result codes counted as unavailable.
check(in_array(Memcached::RES_TIMEOUT, C::MEMCACHED_UNAVAILABLE, true) && !in_array(Memcached::RES_SERVER_ERROR, C::MEMCACHED_UNAVAILABLE, true)
    && !in_array(Memcached::RES_NOTFOUND, C::MEMCACHED_UNAVAILABLE, true), 'memcached: a timeout is unavailable, SERVER_ERROR and a miss are not');

echo "php-fpm unit tests: $passed passed, $failed failed\n";
exit($failed === 0 ? 0 : 1);
