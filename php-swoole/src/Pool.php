<?php
declare(strict_types=1);

namespace App;

use Swoole\ConnectionPool;

// Workaround: ConnectionPool cannot drop a connection; put(null) reopens at once, in the caller (README, Workarounds)
/**
 * One backend's connections in one worker: Swoole's ConnectionPool through its public API
 * (constructor, fill(), get(), put()), plus when a connection is to be replaced.
 *
 * ConnectionPool's way to give back a broken connection, put(null), opens the replacement at
 * once in the caller: on a frozen backend that connect would hold the request's 503 past its
 * deadline. And a pool cannot drop its idle connections, which are all dead after a backend
 * restart. So a broken connection goes back closed and marked, and the next get() that takes it
 * replaces it (put(null)) in that request's own coroutine, under that request's deadline; after a
 * connection-level failure, every connection opened before it is replaced the same way.
 */
final class Pool
{
    private ConnectionPool $pool;
    /** @var \WeakMap<object, int> each connection's place in the order of opening; -1: broken */
    private \WeakMap $opened;
    private int $opens = 0;
    /** connections opened before this one (by place) are replaced when next taken */
    private int $staleBefore = 0;

    /**
     * @param \Closure(): object $connect opens a connection, or throws
     * @param \Closure(object): void $close closes one (never throws)
     */
    public function __construct(\Closure $connect, private \Closure $close, int $size)
    {
        $this->opened = new \WeakMap();
        $this->pool = new ConnectionPool(function () use ($connect): object {
            $connection = $connect();
            $this->opened[$connection] = $this->opens++;
            return $connection;
        }, $size);
    }

    /** Opens every connection now, so that none is opened while serving (throws at the first that fails). */
    public function fill(): void
    {
        $this->pool->fill();
    }

    /**
     * A connection, waiting at most $timeout seconds for a free one (negative: no limit; the caller
     * bounds the wait). False when none came in time; throws when a connection had to be opened
     * and that failed.
     */
    public function get(float $timeout): object|false
    {
        while (($connection = $this->pool->get($timeout)) !== false
                && $this->opened[$connection] < $this->staleBefore) {
            ($this->close)($connection);
            $this->pool->put(null); // opens the replacement here, and gives it to the pool; or throws
        }
        return $connection;
    }

    /** A connection in step goes back as it is. */
    public function put(object $connection): void
    {
        $this->pool->put($connection);
    }

    /**
     * The connection in hand is broken: closed now (a late reply can never be read as another
     * request's answer), replaced when next taken. $suspectIdle: the failure was at the connection
     * level (refused, reset, closed; not a slow reply), so every connection opened so far is
     * replaced when next taken too (a restarted backend closed them all).
     */
    public function broken(object $connection, bool $suspectIdle): void
    {
        ($this->close)($connection);
        $this->opened[$connection] = -1;
        if ($suspectIdle) {
            $this->staleBefore = $this->opens;
        }
        $this->pool->put($connection);
    }
}
