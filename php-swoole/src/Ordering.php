<?php
declare(strict_types=1);

namespace App;

use Swoole\Coroutine\Channel;
use Swoole\Event;
use Swoole\Http\Server;

/**
 * Response order and read back-pressure, per connection of this worker (README, "Protocol
 * hygiene"). Swoole runs a connection's pipelined requests as concurrent coroutines; each takes a
 * turn on arrival, and its response goes out only when every response before it is written. A
 * client that pipelines without reading the answers is paused (Server::pause) until they drain.
 */
final class Ordering
{
    /** Requests one connection may have in flight before the worker stops reading from it, and the count at which it reads again. */
    public const MAX_INFLIGHT = 256;
    public const RESUME_INFLIGHT = 128;
    /**
     * Requests in flight in this worker above which a connection that already has one in flight is
     * closed at its next: a last resort against many such clients at once, below the ~50,000
     * waiting coroutines at which the worker dies of memory_limit (README).
     */
    public const MAX_INFLIGHT_WORKER = 20000;

    /**
     * @var array<int, int> per connection with requests in flight: how many it has received, so
     * the turn of the next one (0, 1, ...). Both entries are dropped when the last response in
     * flight is written, so a connection has requests in flight exactly when it is a key here.
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

    public function __construct(private Server $server)
    {
    }

    /** A request arrived on the connection: its turn, or -1 when the worker is full and the connection is to be closed. */
    public function arrive(int $fd): int
    {
        $turn = $this->received[$fd] ?? 0;
        // Workaround: max_coroutine is no bound: requests in flight per worker are (README, Workarounds)
        if ($turn !== 0 && $this->inflightWorker >= self::MAX_INFLIGHT_WORKER) {
            return -1;
        }
        $this->received[$fd] = $turn + 1;
        $this->inflightWorker++;
        // Workaround: Swoole lifts a pause when the output drains: paused again here (README, Workarounds)
        // $turn + 1 bounds the connection's requests in flight: the exact count only when it may matter.
        if ($turn + 1 >= self::MAX_INFLIGHT && $this->inflight($fd) >= self::MAX_INFLIGHT) {
            $this->throttle($fd);
        }
        return $turn;
    }

    /**
     * Returns when the request with this turn may write its response: at once when no response
     * before it is pending (one request at a time on a connection, the common case), else when
     * done() of the one before wakes it.
     */
    public function awaitTurn(int $fd, int $turn): void
    {
        if (($this->written[$fd] ?? 0) !== $turn) {
            $ready = new Channel(1);
            $this->waiting[$fd][$turn] = $ready;
            $ready->pop();
        }
    }

    /** The response of this turn is written (or the request ended without one): wakes the next if it waits. */
    public function done(int $fd, int $turn): void
    {
        $this->inflightWorker--;
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

    /** Whether the connection has requests in flight. */
    public function busy(int $fd): bool
    {
        return isset($this->received[$fd]);
    }

    /** Whether the connection's unsent output is at buffer_high_watermark. */
    public function outputFull(int $fd): bool
    {
        return isset($this->outFull[$fd]);
    }

    /** Requests received on the connection and not yet answered. */
    private function inflight(int $fd): int
    {
        return ($this->received[$fd] ?? 0) - ($this->written[$fd] ?? 0);
    }

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

    /** onClose */
    public function closed(int $fd): void
    {
        unset($this->outFull[$fd]);
    }
}
