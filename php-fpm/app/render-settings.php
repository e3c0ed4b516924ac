<?php
// Run by run.sh at start, `php8.2 -n app/render-settings.php > $RUN_DIR/settings.php`: the settings
// the handlers read, taken from run.sh's environment once and written as a class of constants.
// OPcache preloads it with lib.php (conf/preload.php), so a request finds its settings compiled
// in: no getenv() per request (counted: building the MariaDB DSN from five variables on each
// /mysql cost ~4,800 instructions, README Tuning). Symfony's `composer dump-env prod` and
// Laravel's `config:cache` do the same for the same reason.
declare(strict_types=1);

$get = static function (string $name): string {
    $value = getenv($name);
    if ($value === false || $value === '') {
        fwrite(STDERR, "php-fpm: missing environment variable $name\n");
        exit(2);
    }
    return $value;
};
$port = static function (string $name) use ($get): int {
    $value = $get($name);
    if (preg_match('/\A[1-9][0-9]{0,4}\z/', $value) !== 1 || (int) $value > 65535) {
        fwrite(STDERR, "php-fpm: $name must be a TCP port\n");
        exit(2);
    }
    return (int) $value;
};
$timeoutMs = (int) $get('BACKEND_TIMEOUT_MS'); // run.sh has checked it is a positive integer

$settings = [
    'TIMEOUT_MS' => $timeoutMs,
    'TIMEOUT_S' => $timeoutMs / 1000.0,
    'REDIS_HOST' => $get('REDIS_HOST'),
    'REDIS_PORT' => $port('REDIS_PORT'),
    'MYSQL_DSN' => sprintf('mysql:host=%s;port=%d;dbname=%s;charset=utf8mb4',
        $get('MYSQL_HOST'), $port('MYSQL_PORT'), $get('MYSQL_DATABASE')),
    'MYSQL_USER' => $get('MYSQL_USER'),
    'MYSQL_PASSWORD' => $get('MYSQL_PASSWORD'),
    'MEMCACHE_HOST' => $get('MEMCACHE_HOST'),
    'MEMCACHE_PORT' => $port('MEMCACHE_PORT'),
    'PERSISTENT' => $get('FPM_PERSISTENT') === '1', // run.sh has checked it is 1 or 0
];

echo "<?php\n// Rendered by run.sh from its environment (app/render-settings.php) at start: not to be edited.\n",
    "final class Settings\n{\n";
foreach ($settings as $name => $value) {
    echo '    public const ', $name, ' = ', var_export($value, true), ";\n";
}
echo "}\n";
