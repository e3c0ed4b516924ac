<?php
declare(strict_types=1);

namespace App;

/** GET greeting:<id> on Redis, through phpredis (its socket is a PHP stream: the runtime hooks make it yield). */
final class RedisBackend
{
    /** Error replies that say the server cannot serve now: a 503, not a 500. */
    public const UNAVAILABLE_KINDS = ['LOADING', 'BUSY', 'MASTERDOWN', 'TRYAGAIN', 'CLUSTERDOWN'];

    public readonly Pool $pool;

    public function __construct(Config $c)
    {
        $this->pool = new Pool(static function () use ($c): \Redis {
            $redis = new \Redis();
            $redis->connect($c->redisHost, $c->redisPort, $c->timeout); // throws RedisException
            return $redis;
        }, static function (object $redis): void {
            try {
                $redis->close();
            } catch (\RedisException) {
                // already gone
            }
        }, $c->poolSize);
    }

    // Workaround: phpredis returns false for ERR and WRONGTYPE replies, as for a miss (README, Workarounds)
    /**
     * One GET, its reply awaited at most $left seconds. phpredis returns false for a missing key
     * and also for some error replies (ERR, WRONGTYPE), and throws RedisException for a
     * connection failure or timeout and for the other error replies (NOPERM, NOAUTH, LOADING, ...:
     * redis_error_throw in phpredis's library.c). Either way the reply stays in getLastError(); a
     * connection in the pool has none (failure() clears it before one goes back), so a false
     * with a last error is this command's.
     */
    public static function get(\Redis $r, int $id, float $left): ?string
    {
        try {
            $r->setOption(\Redis::OPT_READ_TIMEOUT, $left);
            $value = $r->get("greeting:$id");
        } catch (\RedisException $e) {
            throw self::failure($r, $e);
        }
        if ($value === false && $r->getLastError() !== null) {
            throw self::failure($r, null);
        }
        return $value === false ? null : $value;
    }

    /** What a failed command means, from phpredis's last error (clearing it: the connection may go back). */
    private static function failure(\Redis $r, ?\RedisException $e): \RuntimeException
    {
        try {
            $error = $r->getLastError() ?? '';
            $r->clearLastError();
        } catch (\RedisException) {
            $error = ''; // phpredis throws here too when the connection is gone: no reply came
        }
        return self::classify($error, $e);
    }

    /**
     * The server answering with an error is a 500 (BackendError: the connection is in step),
     * unless the error says it cannot serve now; anything else (no connection, no reply in time:
     * phpredis records a failed reconnect as "Connection refused", not a reply) is a 503. A Redis
     * error reply starts with its kind in capitals (the RESP spec, "Simple errors").
     */
    public static function classify(string $error, ?\Throwable $cause = null): Unavailable|BackendError
    {
        if (preg_match('/\A([A-Z][A-Z0-9_]*)(?: |\z)/', $error, $kind) !== 1
                || in_array($kind[1], self::UNAVAILABLE_KINDS, true)) {
            return new Unavailable('redis: ' . ($cause?->getMessage() ?? $error), 0, $cause);
        }
        return new BackendError("redis replied: $error", 0, $cause);
    }
}
