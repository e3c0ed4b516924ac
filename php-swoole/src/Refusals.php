<?php
declare(strict_types=1);

namespace App;

use Swoole\Http\Response;
use Swoole\Http\Server;

/**
 * Requests refused for their size (CONTRACT.md, "Sizes"): a request line over 8,192 bytes is 414,
 * a head over 16,384 bytes 431 (a head of 8,193 to 16,384 bytes is served). And the 408 of a head
 * that did not complete in time (Sweep).
 */
final class Refusals
{
    public const MAX_REQUEST_LINE = 8192;
    public const MAX_HEAD = 16384;

    // Workaround: Swoole has no limit on the request line or head below 64 KiB (README, Workarounds)
    /**
     * 414 or 431 for a request line or head over the contract's limits, from the raw request
     * Swoole hands over (Request::getData(): the head as received, then the body); else 0.
     * Swoole's reactor itself reads a head of up to 64 KiB (README, "Protocol hygiene").
     */
    public static function status(string|false $data): int
    {
        if (!is_string($data) || strlen($data) <= self::MAX_REQUEST_LINE) {
            return 0; // within both limits, however it is split: the common case, no scan
        }
        $line = strpos($data, "\r\n");
        if ($line === false) {
            return 0; // Swoole dispatches only complete heads: not reached
        }
        if ($line > self::MAX_REQUEST_LINE) {
            return 414;
        }
        $head = strpos($data, "\r\n\r\n", $line);
        return $head === false || $head + 4 > self::MAX_HEAD ? 431 : 0;
    }

    /** 408 on a connection whose head did not complete in time (no request object exists), then close. */
    public static function headTimeout(Server $server, int $fd): void
    {
        $res = Response::create($server, $fd);
        if ($res !== false) {
            Http::write($res, 408, Http::TEXT, Http::REASONS[408], false, true);
        }
        $server->close($fd);
    }
}
