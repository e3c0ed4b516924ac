<?php
declare(strict_types=1);

namespace App;

use Swoole\Http\Server;

// Workaround: Swoole has no head timeout; its heartbeat misses connections in SWOOLE_BASE (README, Workarounds)
/**
 * The head and idle timeouts (README, "Protocol hygiene"): run() every Config::$sweepMs in each
 * worker, over this worker's connections, with what Swoole knows of each (getClientInfo()).
 *
 * Head: a connection holds part of a request when Swoole received bytes on it after the last
 * request it dispatched (last_recv_time > last_dispatch_time, or after onConnect on a new one)
 * and has no request in flight and no unsent output. Counted from the first sweep that sees it so
 * (the latest its first byte can have come), it gets 408 and is closed after HEAD_TIMEOUT_MS,
 * however slowly the bytes keep coming. Swoole has no such timeout.
 *
 * Idle: a connection with no request in flight that has neither received a byte nor sent an
 * answer for IDLE_TIMEOUT_MS is closed. (Swoole's heartbeat would count received bytes only, and
 * misses connections in SWOOLE_BASE with several workers.)
 */
final class Sweep
{
    /**
     * @var array<int, float> this worker's connections (onConnect to onClose) and when each was
     * accepted. Kept here because Swoole's own connection iterator (and its heartbeat, which walks
     * the same range) misses connections in SWOOLE_BASE with several workers (README).
     */
    private array $connectedAt = [];
    /** @var array<int, float> connections with part of a request received: when that was first seen */
    private array $headSince = [];

    public function __construct(private Server $server, private Ordering $ordering, private float $headTimeout,
                                private float $idleTimeout)
    {
    }

    public function connected(int $fd): void
    {
        $this->connectedAt[$fd] = microtime(true);
    }

    public function closed(int $fd): void
    {
        unset($this->connectedAt[$fd], $this->headSince[$fd]);
    }

    public function run(): void
    {
        $now = microtime(true);
        foreach ($this->connectedAt as $fd => $at) {
            $info = $this->server->getClientInfo($fd);
            if ($info === false) {
                unset($this->connectedAt[$fd], $this->headSince[$fd]);
                continue;
            }
            if ($this->ordering->busy($fd)) {
                unset($this->headSince[$fd]);
                continue;
            }
            $since = $info['last_dispatch_time'] > 0 ? $info['last_dispatch_time'] : $at;
            if ($info['last_recv_time'] <= $since || $info['send_queued_bytes'] > 0 || $this->ordering->outputFull($fd)) {
                unset($this->headSince[$fd]);
                if ($now - max($info['last_recv_time'], $info['last_send_time']) >= $this->idleTimeout) {
                    $this->server->close($fd);
                }
                continue;
            }
            $first = $this->headSince[$fd] ??= $info['last_recv_time'];
            if ($now - $first >= $this->headTimeout) {
                unset($this->headSince[$fd]);
                Refusals::headTimeout($this->server, $fd);
            }
        }
    }
}
