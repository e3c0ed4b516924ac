<?php
// opcache.preload (conf/php.ini): compiled and linked once at start, for every request of every
// pool: the settings run.sh rendered (app/render-settings.php) and the handlers.
require getenv('RUN_DIR') . '/settings.php';
require __DIR__ . '/lib.php';
