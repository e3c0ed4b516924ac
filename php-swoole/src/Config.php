<?php
declare(strict_types=1);

namespace App;

/**
 * The configuration, read once from the environment at start. Addresses, ports, credentials and
 * the contract's timeouts come from the environment only (the harness passes
 * shared-schema/defaults.env); this stack's own knobs have their defaults here.
 */
final class Config
{
    /** Connections per worker and backend (README, Tuning). */
    public const DEFAULT_POOL_SIZE = 32;

    public readonly string $host;
    public readonly int $port;
    public readonly string $redisHost;
    public readonly int $redisPort;
    public readonly string $mysqlHost;
    public readonly int $mysqlPort;
    public readonly string $mysqlUser;
    public readonly string $mysqlPassword;
    public readonly string $mysqlDatabase;
    public readonly string $memcacheHost;
    public readonly int $memcachePort;
    /** BACKEND_TIMEOUT_MS, and the same in seconds */
    public readonly int $timeoutMs;
    public readonly float $timeout;
    /** HEAD_TIMEOUT_MS, IDLE_TIMEOUT_MS in seconds */
    public readonly float $headTimeout;
    public readonly float $idleTimeout;
    /** SWOOLE_POOL_SIZE, default 32 */
    public readonly int $poolSize;
    /** SWOOLE_WORKERS, default the CPUs of the affinity mask */
    public readonly int $workers;
    /** How often the sweep looks at the connections: an eighth of the shorter limit, 20 to 500 ms. */
    public readonly int $sweepMs;

    /** @param array<string, string> $env */
    public function __construct(array $env)
    {
        $get = static function (string $name) use ($env): string {
            $value = $env[$name] ?? '';
            if ($value === '') {
                throw new \InvalidArgumentException("missing environment variable $name");
            }
            return $value;
        };
        $positive = static function (string $name, string $value, int $max = PHP_INT_MAX): int {
            if (preg_match('/\A[1-9][0-9]{0,17}\z/', $value) !== 1 || (int) $value > $max) {
                throw new \InvalidArgumentException("$name must be an integer from 1 to $max");
            }
            return (int) $value;
        };
        $this->host = $get('HOST');
        $this->port = $positive('PORT', $get('PORT'), 65535);
        $this->redisHost = $get('REDIS_HOST');
        $this->redisPort = $positive('REDIS_PORT', $get('REDIS_PORT'), 65535);
        $this->mysqlHost = $get('MYSQL_HOST');
        $this->mysqlPort = $positive('MYSQL_PORT', $get('MYSQL_PORT'), 65535);
        $this->mysqlUser = $get('MYSQL_USER');
        $this->mysqlPassword = $get('MYSQL_PASSWORD');
        $this->mysqlDatabase = $get('MYSQL_DATABASE');
        $this->memcacheHost = $get('MEMCACHE_HOST');
        $this->memcachePort = $positive('MEMCACHE_PORT', $get('MEMCACHE_PORT'), 65535);
        $this->timeoutMs = $positive('BACKEND_TIMEOUT_MS', $get('BACKEND_TIMEOUT_MS'));
        $this->timeout = $this->timeoutMs / 1000;
        $this->headTimeout = $positive('HEAD_TIMEOUT_MS', $get('HEAD_TIMEOUT_MS')) / 1000;
        $this->idleTimeout = $positive('IDLE_TIMEOUT_MS', $get('IDLE_TIMEOUT_MS')) / 1000;
        $this->poolSize = $positive('SWOOLE_POOL_SIZE', ($env['SWOOLE_POOL_SIZE'] ?? '') ?: (string) self::DEFAULT_POOL_SIZE, 100000);
        $workers = $env['SWOOLE_WORKERS'] ?? '';
        $this->workers = $workers === '' ? self::usableCpus() : $positive('SWOOLE_WORKERS', $workers, 9999);
        $this->sweepMs = (int) max(20, min(500, min($this->headTimeout, $this->idleTimeout) * 1000 / 8));
    }

    /** The process's environment; a bad or missing value ends the process with its reason. */
    public static function fromEnvironment(): self
    {
        try {
            return new self(getenv());
        } catch (\InvalidArgumentException $e) {
            fwrite(STDERR, "php-swoole: {$e->getMessage()}\n");
            exit(2);
        }
    }

    // Workaround: swoole_cpu_num() counts every online CPU, not the affinity mask (README, Workarounds)
    /** The CPUs this process may run on (its affinity mask, as `taskset` sets it), else all of them. */
    public static function usableCpus(): int
    {
        $status = @file_get_contents('/proc/self/status');
        if ($status !== false && preg_match('/^Cpus_allowed_list:\s*(\S+)/m', $status, $m) === 1) {
            $n = self::countCpuList($m[1]);
            if ($n > 0) {
                return $n;
            }
        }
        return swoole_cpu_num();
    }

    /** How many CPUs a list such as `0-3,6,8-9` names (0 when it is not such a list). */
    public static function countCpuList(string $list): int
    {
        $n = 0;
        foreach (explode(',', $list) as $range) {
            if (preg_match('/\A([0-9]+)(?:-([0-9]+))?\z/', $range, $m) !== 1) {
                return 0;
            }
            $n += isset($m[2]) ? max(0, (int) $m[2] - (int) $m[1] + 1) : 1;
        }
        return $n;
    }
}
