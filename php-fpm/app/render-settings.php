<?php
// Run by run.sh at start (FPM_SETTINGS=preloaded, the default), `php8.2 -n app/render-settings.php
// > $RUN_DIR/settings.php`: the settings written as constants of a class, which OPcache preloads
// with lib.php (app/preload.php), so a request finds them compiled in (README, Tuning). Symfony's
// `composer dump-env prod` and Laravel's `config:cache` do the same for the same reason.
declare(strict_types=1);
require __DIR__ . '/settings.php';

echo "<?php\n// Rendered by run.sh from its environment (app/render-settings.php) at start: not to be edited.\n",
    "final class Settings\n{\n";
foreach (settings_from_env() as $name => $value) {
    echo '    public const ', $name, ' = ', var_export($value, true), ";\n";
}
echo "}\n";
