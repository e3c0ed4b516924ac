<?php
declare(strict_types=1);

namespace App;

use Swoole\Coroutine;
use Swoole\Coroutine\CanceledException;
use Swoole\Timer;

/**
 * The data endpoints: the greeting of an id from one backend, within BACKEND_TIMEOUT_MS from
 * arrival, pool wait included (nothing before this yields, so arrival is now).
 *
 * Redis and memcached are bounded by their clients' own timeouts, each set to what is left of the
 * deadline: the pool's get($timeout), phpredis's read timeout, Coroutine\Client::recv($timeout);
 * each is a timer in Swoole's C core, set only while a wait blocks, and a wait that times out ends
 * the request's own coroutine there. mysqlnd's timeouts count whole seconds, so a MySQL request
 * gets a timer of its own instead, which at the deadline cancels the request's coroutine
 * (Coroutine::cancel with an exception): whatever it waits on (a pool slot, a connect, a reply)
 * ends at once with CanceledException. Either way nothing runs on after the 503.
 */
final class Greetings
{
    // Workaround: Swoole's timers may fire up to 2 ms early (README, Workarounds)
    // A timeout is cut to whole milliseconds and counted on a millisecond clock (src/wrapper/timer.cc, src/core/timer.cc).
    private const TIMER_SLACK = 0.002;

    /** @var array<int, true> coroutines whose deadline timer fired (mysql(), expire()) */
    private array $expired = [];
    /** expire() as a Closure, made once: the deadline timer's callback */
    private \Closure $onDeadline;

    public function __construct(private Config $c, private RedisBackend $redis, private MysqlBackend $mysql,
                                private MemcacheBackend $memcache)
    {
        $this->onDeadline = $this->expire(...);
    }

    /** Opens every pool's connections now, so that none is opened while serving. */
    public function warm(): void
    {
        foreach (['redis' => $this->redis, 'mysql' => $this->mysql, 'memcache' => $this->memcache] as $name => $backend) {
            try {
                $backend->pool->fill();
            } catch (\Throwable $e) {
                // The pool opens the rest on demand (get()) once the backend answers.
                fwrite(STDERR, "php-swoole: $name: cannot connect at start: {$e->getMessage()}\n");
            }
        }
    }

    /** @return array{int, string, string} status, content type, body */
    public function redis(string $query): array
    {
        return $this->answer('/redis', $query);
    }

    /** @return array{int, string, string} */
    public function mysql(string $query): array
    {
        return $this->answer('/mysql', $query);
    }

    /** @return array{int, string, string} */
    public function memcache(string $query): array
    {
        return $this->answer('/memcache', $query);
    }

    /** @return array{int, string, string} */
    private function answer(string $path, string $query): array
    {
        $id = Id::parse($query);
        if ($id === null) {
            return Http::error(400);
        }
        try {
            $message = $path === '/mysql' ? $this->canceledAtDeadline($id) : $this->read($path, $id, microtime(true) + $this->c->timeout);
        } catch (Unavailable $e) {
            fwrite(STDERR, "php-swoole: $path?id=$id: backend unavailable: {$e->getMessage()}\n");
            return Http::error(503);
        } catch (BackendError $e) {
            fwrite(STDERR, "php-swoole: $path?id=$id: backend error: {$e->getMessage()}\n");
            return Http::error(500);
        } catch (\Throwable $e) {
            fwrite(STDERR, "php-swoole: $path?id=$id: $e\n");
            return Http::error(500);
        }
        return $message === null ? Http::error(404) : [200, Http::JSON, self::json($id, $message)];
    }

    // Workaround: MySQL's deadline is a timer that cancels the coroutine (README, Workarounds)
    private function canceledAtDeadline(int $id): ?string
    {
        $cid = Coroutine::getCid();
        $timer = Timer::after($this->c->timeoutMs, $this->onDeadline, $cid);
        try {
            return $this->read('/mysql', $id, null);
        } catch (\Throwable $e) {
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
     * ($deadline null) until its timer cancels it: then the wait for a free connection has no
     * timeout of its own (that would be a second timer). The connection goes back to the pool
     * after a success or an error the backend answered with (BackendError: the connection is in
     * step); after anything else it is closed and replaced (Pool::broken()), so a late reply can
     * never be read as the answer to a later request, and after a connection-level failure other
     * than the deadline the pool's idle connections are replaced too.
     */
    private function read(string $path, int $id, ?float $deadline): ?string
    {
        $pool = match ($path) {
            '/redis' => $this->redis->pool,
            '/mysql' => $this->mysql->pool,
            default => $this->memcache->pool,
        };
        try {
            $conn = $pool->get($deadline === null ? -1 : $this->c->timeout); // arrival was just now
        } catch (CanceledException $e) {
            throw $e;
        } catch (\Throwable $e) {
            // A connection had to be opened (the pool had fewer than its size, or one to replace) and that failed.
            throw $e instanceof \PDOException && !MysqlBackend::unavailable($e)
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
                '/redis' => RedisBackend::get($conn, $id, $left),
                '/mysql' => $this->mysql->get($conn, $id),
                default => MemcacheBackend::get($conn, $id, $deadline),
            };
        } catch (BackendError $e) {
            $pool->put($conn);
            throw $e;
        } catch (\Throwable $e) {
            $deadlinePassed = $deadline === null
                ? Coroutine::isCanceled()
                : microtime(true) >= $deadline - self::TIMER_SLACK;
            // Refused, reset or closed (not the deadline: a slow backend's idle connections are fine).
            $pool->broken($conn, $e instanceof Unavailable && !$deadlinePassed);
            throw $e;
        }
        $pool->put($conn);
        return $value;
    }

    /**
     * {"id":N,"message":"..."}: PHP's own encoder with `/` and non-ASCII left raw, which gives the
     * contract's bytes (only `"` and `\` escaped) for every stored greeting. A message that is not
     * valid UTF-8 throws (a 500), never a wrong body.
     */
    public static function json(int $id, string $message): string
    {
        return json_encode(['id' => $id, 'message' => $message],
            JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);
    }
}
