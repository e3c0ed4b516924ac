<?php
declare(strict_types=1);

namespace App;

use Swoole\Coroutine\Client;

// Workaround: no maintained PHP memcached client yields to Swoole (README, Workarounds)
/**
 * memcached's text protocol over Swoole's coroutine TCP client: one `get`, the reply read until it
 * is complete. No maintained memcached client for PHP yields to Swoole: php-memcached is
 * libmemcached, whose sockets are its own C code, which no runtime hook reaches (Swoole hooks PHP
 * streams, ext-sockets, curl and a few PDO drivers it ships: SWOOLE_HOOK_* in
 * include/swoole_coroutine.h); php-memcache reports a timed-out get as a miss (README).
 */
final class MemcacheClient
{
    private Client $client;

    public function __construct(string $host, int $port, float $timeout)
    {
        $this->client = new Client(SWOOLE_SOCK_TCP);
        $this->client->set(['open_tcp_nodelay' => true]);
        if (!$this->client->connect($host, $port, $timeout)) {
            throw new Unavailable("memcached: connect: {$this->client->errMsg}");
        }
    }

    /** One `get`, its reply read until $deadline (microtime); null for a miss. */
    public function get(string $key, float $deadline): ?string
    {
        if ($this->client->send("get $key\r\n") === false) {
            throw new Unavailable("memcached: send: {$this->client->errMsg}");
        }
        $buf = '';
        while (($value = self::reply($buf)) === false) {
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
        return $value;
    }

    /**
     * The reply to one `get` in the bytes received so far: false while it is incomplete, null for
     * a miss (`END`), else the value (`VALUE <key> <flags> <bytes>[ <cas>]`, the data, `END`).
     * An error reply (`ERROR`, `CLIENT_ERROR ...`, `SERVER_ERROR ...`) is a BackendError: it is
     * the whole reply, so the connection stays in step. Anything else, or bytes beyond the reply,
     * is a RuntimeException (the connection is out of step: it is dropped).
     */
    public static function reply(string $buf): string|false|null
    {
        $eol = strpos($buf, "\r\n");
        if ($eol === false) {
            return false;
        }
        $line = substr($buf, 0, $eol);
        if ($line === 'END') {
            return self::whole($buf, $eol + 2, null);
        }
        $head = explode(' ', $line);
        if ($head[0] === 'ERROR' || $head[0] === 'CLIENT_ERROR' || $head[0] === 'SERVER_ERROR') {
            self::whole($buf, $eol + 2, null);
            throw new BackendError("memcached replied: $line");
        }
        if ($head[0] !== 'VALUE' || count($head) < 4 || count($head) > 5 || $head[3] === ''
                || strlen($head[3]) > 10 || strspn($head[3], '0123456789') !== strlen($head[3])) {
            throw new \RuntimeException("memcached: unexpected reply $line");
        }
        $len = (int) $head[3];
        $end = $eol + 2 + $len;
        if (strlen($buf) < $end + 7) {
            return false;
        }
        if (substr($buf, $end, 7) !== "\r\nEND\r\n") {
            throw new \RuntimeException('memcached: malformed reply');
        }
        return self::whole($buf, $end + 7, substr($buf, $eol + 2, $len));
    }

    /** $value, when the reply ends at $end of $buf; nothing may follow it. */
    private static function whole(string $buf, int $end, ?string $value): ?string
    {
        if (strlen($buf) !== $end) {
            throw new \RuntimeException('memcached: bytes after the reply');
        }
        return $value;
    }

    public function close(): void
    {
        $this->client->close();
    }
}
