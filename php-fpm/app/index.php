<?php
// The front controller: every request nginx receives comes here (SCRIPT_FILENAME,
// conf/fastcgi_params.conf). Routing order per the contract: path -> method -> id -> backend.
// The handlers (lib.php) and the Settings class are preloaded (app/preload.php) unless
// FPM_SETTINGS=env, the plain way, where this request loads them (README, Tuning).
declare(strict_types=1);

if (!class_exists('Settings', false)) {
    require __DIR__ . '/settings-env.php';
    require __DIR__ . '/lib.php';
}
if (Settings::PARAMS_FROM_SERVER) {
    require __DIR__ . '/params-server.php';
}

handle();
