#!/usr/bin/env bash
# Installs ext-swoole the standard way, with PECL (php8.2-dev and php-pear come from the manifest's
# apt list), and enables it for the CLI. Fails fast where pecl.php.net cannot be reached; the
# stack is then listed as unavailable ("ext-swoole not loaded").
set -euo pipefail
# README, Versions: 6.2.2, the newest tag this machine can build (upstream has released 6.2.3 since).
SWOOLE_VERSION=6.2.2

loaded="$(php -r 'echo phpversion("swoole") ?: "";')"
if [[ "$loaded" == "$SWOOLE_VERSION" ]]; then
    echo "php-swoole: ext-swoole $loaded already loaded"
    exit 0
fi
[[ -z "$loaded" ]] || echo "php-swoole: ext-swoole $loaded loaded, $SWOOLE_VERSION wanted: installing it"
command -v pecl >/dev/null || { echo "php-swoole: pecl not found (php-pear)" >&2; exit 1; }
if ! timeout 20 pecl channel-update pecl.php.net; then
    echo "php-swoole: pecl.php.net unreachable; ext-swoole not installed" >&2
    exit 1
fi
sudo=""
[[ "$(id -u)" == 0 ]] || sudo="sudo"
# Empty answers take the defaults of pecl's configure prompts; the build takes a few minutes.
printf '\n%.0s' {1..20} | timeout 900 $sudo pecl install -f "swoole-$SWOOLE_VERSION"
ini_dir="$(php -r 'echo PHP_CONFIG_FILE_SCAN_DIR;')"
echo "extension=swoole.so" | $sudo tee "$ini_dir/20-swoole.ini" >/dev/null
php -m | grep -qx swoole
