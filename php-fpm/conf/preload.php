<?php
// opcache.preload (conf/php.ini), rendered by run.sh: compiled and linked once at start, for every
// request of every pool. index.php loads it itself when preloading is off.
require '@RUN_DIR@/settings.php'; // the settings (app/render-settings.php)
require '@APP@/lib.php';          // the handlers
