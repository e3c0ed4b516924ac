<?php
// The front controller: every request nginx receives comes here (SCRIPT_FILENAME is fixed in
// conf/nginx.conf). Routing order per the contract: path -> method -> id -> backend.
// The functions live in lib.php and the settings in the Settings class run.sh renders at start;
// OPcache preloads both (conf/php.ini: opcache.preload, conf/preload.php). When preloading is off,
// the require below loads them from the opcode cache instead.
declare(strict_types=1);

if (!function_exists('respond')) {
    require getenv('RUN_DIR', true) . '/preload.php';
}

handle(); // reads the request's FastCGI parameters with getenv(), never $_SERVER (lib.php: param())
