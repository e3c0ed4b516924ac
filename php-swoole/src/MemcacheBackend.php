<?php
declare(strict_types=1);

namespace App;

/** get greeting:<id> on memcached, through the stack's own coroutine client (MemcacheClient). */
final class MemcacheBackend
{
    public readonly Pool $pool;

    public function __construct(Config $c)
    {
        $this->pool = new Pool(
            static fn(): MemcacheClient => new MemcacheClient($c->memcacheHost, $c->memcachePort, $c->timeout),
            static fn(object $client) => $client->close(),
            $c->poolSize,
        );
    }

    public static function get(MemcacheClient $client, int $id, float $deadline): ?string
    {
        return $client->get("greeting:$id", $deadline);
    }
}
