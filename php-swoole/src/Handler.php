<?php
declare(strict_types=1);

namespace App;

use Swoole\Http\Request;
use Swoole\Http\Response;
use Swoole\Http\Server;

/**
 * onRequest: the route table's answer, or a refusal, written in the connection's request order
 * with the contract's headers.
 */
final class Handler
{
    /** @param array<string, \Closure(string): array{int, string, string}> $routes path => (query string => status, type, body) */
    public function __construct(private Server $server, private array $routes, private Ordering $ordering)
    {
    }

    public function __invoke(Request $req, Response $res): void
    {
        $fd = $req->fd;
        $turn = $this->ordering->arrive($fd);
        if ($turn < 0) {
            $res->close();
            return;
        }
        try {
            $this->answer($req, $res, $fd, $turn);
        } finally {
            $this->ordering->done($fd, $turn);
        }
    }

    private function answer(Request $req, Response $res, int $fd, int $turn): void
    {
        $server = $req->server;
        $data = $req->getData();
        $refused = Refusals::status($data);
        $path = '/';
        if ($refused === 0) {
            // Host, target form and CONNECT: the path to route, or the refusal's status
            $path = RequestValidity::check($server['request_method'], $server['request_uri'] ?? '/',
                                           $server['server_protocol'], $req->header['host'] ?? null,
                                           is_string($data) ? $data : '');
            $refused = is_int($path) ? $path : 0;
        }
        if ($refused !== 0) {
            [$status, $type, $body] = Http::error($refused);
        } else {
            try {
                [$status, $type, $body] = $this->route($path, $server);
            } catch (\Throwable $e) {
                fwrite(STDERR, "php-swoole: $e\n");
                [$status, $type, $body] = Http::error(500);
            }
        }
        // Workaround: Swoole drops the bytes after a request body (README, Workarounds)
        // After a refusal, and after any request that had a body, the connection is closed: Swoole
        // drops whatever it had received beyond a body (src/server/port.cc, "discard the redundant
        // data"), so a request pipelined behind one would never be answered (README).
        $close = $refused !== 0 || isset($req->header['transfer-encoding'])
            || (($req->header['content-length'] ?? '0') !== '0');
        $this->ordering->awaitTurn($fd, $turn);
        Http::write($res, $status, $type, $body, $server['request_method'] === 'HEAD', $close);
        if ($close) {
            // Queued behind the response when it is not written yet (BaseFactory::end).
            $this->server->close($fd);
        }
    }

    /** @return array{int, string, string} status, content type, body */
    private function route(string $path, array $server): array
    {
        $route = $this->routes[$path] ?? null;
        if ($route === null) {
            return Http::error(404);
        }
        $method = $server['request_method'] ?? '';
        if ($method !== 'GET' && $method !== 'HEAD') {
            return Http::error(405);
        }
        return $route($server['query_string'] ?? '');
    }
}
