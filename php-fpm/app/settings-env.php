<?php
// FPM_SETTINGS=env, the plain way (README, Tuning): nothing preloaded, and every request reads its
// settings from the environment, the pool's env[] (conf/php-fpm.conf). The same class that
// app/render-settings.php writes once at start by default.
declare(strict_types=1);
require __DIR__ . '/settings.php';

define('SETTINGS', settings_from_env());

final class Settings
{
    public const TIMEOUT_MS = SETTINGS['TIMEOUT_MS'];
    public const TIMEOUT_S = SETTINGS['TIMEOUT_S'];
    public const REDIS_HOST = SETTINGS['REDIS_HOST'];
    public const REDIS_PORT = SETTINGS['REDIS_PORT'];
    public const MYSQL_DSN = SETTINGS['MYSQL_DSN'];
    public const MYSQL_USER = SETTINGS['MYSQL_USER'];
    public const MYSQL_PASSWORD = SETTINGS['MYSQL_PASSWORD'];
    public const MEMCACHE_HOST = SETTINGS['MEMCACHE_HOST'];
    public const MEMCACHE_PORT = SETTINGS['MEMCACHE_PORT'];
    public const PERSISTENT = SETTINGS['PERSISTENT'];
    public const PARAMS_FROM_SERVER = SETTINGS['PARAMS_FROM_SERVER'];
}
