<?php
declare(strict_types=1);

namespace App;

// Workaround: Swoole serves any Host, GET *, CONNECT and absolute-form as a path (README, Workarounds)
/**
 * Request validity (CONTRACT.md, "Request validity") for what Swoole hands over: its reactor and
 * llhttp have already refused a method it does not know, a version other than HTTP/1.0 or
 * HTTP/1.1, raw bytes in the target, obs-fold and bad field lines (their 400). Left to check
 * here: the Host line (Swoole keeps the last of several and any value), the target's form, and
 * CONNECT. Each refusal is a status; otherwise the path to route (absolute-form served as its path).
 */
final class RequestValidity
{
    /** uri-host [":" port]: an IP literal or a reg-name (RFC 3986 §3.2.2; no comma: a merged list) */
    private const HOST = '/^(?:\[([0-9A-Fa-f:.]+)\]|(?:[A-Za-z0-9\-._~!$&\'()*+;=]|%[0-9A-Fa-f]{2})+)(?::[0-9]*)?$/D';

    /** The last Host value found valid in this worker: a client sends the same one on every request. */
    private static ?string $lastHost = null;

    /**
     * @param string $method   Swoole's request_method
     * @param string $target   Swoole's request_uri (the target without its query)
     * @param string $protocol Swoole's server_protocol (HTTP/1.1 or HTTP/1.0)
     * @param ?string $host    Swoole's header['host']: the last Host line's value, null without one
     * @param string $data     Request::getData(): the head as received, then any body
     * @return int|string      the refusal's status (400, 501), or the path to route
     */
    public static function check(string $method, string $target, string $protocol, ?string $host, string $data): int|string
    {
        if ($method === 'CONNECT') {
            return 501; // no resource here supports it (RFC 9110 §15.6.2)
        }
        $path = $target;
        if ($target === '' || $target[0] !== '/') {
            if ($target === '*') {
                if ($method !== 'OPTIONS') {
                    return 400; // asterisk-form is for OPTIONS only (RFC 9112 §3.2.4)
                }
            } elseif (preg_match('~^https?://([^/]+)(/.*)?$~Di', $target, $m) && self::validHost($m[1])) {
                $path = ($m[2] ?? '') === '' ? '/' : $m[2]; // absolute-form (RFC 9112 §3.2.2)
            } else {
                return 400;
            }
        }
        // Exactly one Host line in HTTP/1.1, at most one in HTTP/1.0 (RFC 9112 §3.2). Swoole keeps the
        // last one's value: a second is seen in the head as received (the first is in the head when
        // Swoole found one; a second found may be in the body).
        if ($host === null) {
            return $protocol === 'HTTP/1.0' ? $path : 400;
        }
        $next = stripos($data, "\nhost:", stripos($data, "\nhost:") + 6);
        if ($next !== false && $next < strpos($data, "\r\n\r\n")) {
            return 400;
        }
        if ($host !== self::$lastHost) {
            if (!self::validHost($host)) {
                return 400;
            }
            self::$lastHost = $host;
        }
        return $path;
    }

    /** uri-host [":" port], not empty (RFC 9110 §4.2.1: an http URI's host is never empty) */
    public static function validHost(string $value): bool
    {
        if (preg_match(self::HOST, $value, $m) !== 1) {
            return false;
        }
        return ($m[1] ?? '') === '' || filter_var($m[1], FILTER_VALIDATE_IP, FILTER_FLAG_IPV6) !== false;
    }
}
