<?php
declare(strict_types=1);

namespace App;

/** The contract's response bytes: content types, error bodies, and the headers every response carries. */
final class Http
{
    public const TEXT = 'text/plain; charset=utf-8';
    public const JSON = 'application/json';
    public const REASONS = [400 => 'Bad Request', 404 => 'Not Found', 405 => 'Method Not Allowed',
                            408 => 'Request Timeout', 414 => 'URI Too Long', 431 => 'Request Header Fields Too Large',
                            500 => 'Internal Server Error', 501 => 'Not Implemented', 503 => 'Service Unavailable',
                            505 => 'HTTP Version Not Supported'];

    /** @return array{int, string, string} an error status, with its reason phrase as the body */
    public static function error(int $status): array
    {
        return [$status, self::TEXT, self::REASONS[$status]];
    }

    /**
     * Writes a response through Swoole's Http\Response (or anything with its status(), header()
     * and end()). Swoole adds Date, Connection and (from end()) Content-Length.
     */
    public static function write(object $res, int $status, string $type, string $body, bool $head, bool $close): void
    {
        if ($status !== 200) { // a Response is a 200 unless told otherwise
            $res->status($status);
        }
        // Workaround: Swoole's default Server and Content-Type headers (README, Workarounds)
        // Replaces Swoole's own `Server: swoole-http-server` and default text/html Content-Type.
        $res->header('Server', 'php-swoole');
        $res->header('Content-Type', $type);
        if ($status === 405) {
            $res->header('Allow', 'GET, HEAD');
        }
        if ($close) {
            $res->header('Connection', 'close');
        }
        if ($head) {
            // Workaround: Swoole sends a HEAD response's body (README, Workarounds)
            // Swoole would send the body of a HEAD response: send the headers, with GET's length.
            $res->header('Content-Length', (string) strlen($body));
            $res->end();
        } else {
            $res->end($body);
        }
    }
}
