<?php
// The settings the handlers read, from the environment: run.sh's when app/render-settings.php
// writes them once at start, the pool's env[] (conf/php-fpm.conf) when app/settings-env.php reads
// them on every request. run.sh has checked every value.
declare(strict_types=1);

function settings_from_env(): array
{
    $timeoutMs = (int) getenv('BACKEND_TIMEOUT_MS');
    return [
        'TIMEOUT_MS' => $timeoutMs,
        'TIMEOUT_S' => $timeoutMs / 1000.0,
        'REDIS_HOST' => (string) getenv('REDIS_HOST'),
        'REDIS_PORT' => (int) getenv('REDIS_PORT'),
        'MYSQL_DSN' => sprintf('mysql:host=%s;port=%d;dbname=%s;charset=utf8mb4',
            getenv('MYSQL_HOST'), (int) getenv('MYSQL_PORT'), getenv('MYSQL_DATABASE')),
        'MYSQL_USER' => (string) getenv('MYSQL_USER'),
        'MYSQL_PASSWORD' => (string) getenv('MYSQL_PASSWORD'),
        'MEMCACHE_HOST' => (string) getenv('MEMCACHE_HOST'),
        'MEMCACHE_PORT' => (int) getenv('MEMCACHE_PORT'),
        'PERSISTENT' => getenv('FPM_PERSISTENT') === '1',
        'PARAMS_FROM_SERVER' => getenv('FPM_PARAMS') === 'server',
    ];
}
