#!/usr/bin/env bash
# Starts PHP-FPM and nginx in the foreground; stops both on SIGTERM/SIGINT (and the other one when
# either exits). conf/php.ini and conf/php-fpm.conf are read where they are: PHP expands their
# ${VAR}s from this environment. nginx cannot, so conf/nginx.conf is rendered into $RUN_DIR.
set -euo pipefail

for v in HOST PORT RUN_DIR BACKEND_TIMEOUT_MS HEAD_TIMEOUT_MS IDLE_TIMEOUT_MS REDIS_HOST REDIS_PORT \
         MYSQL_HOST MYSQL_PORT MYSQL_USER MYSQL_PASSWORD MYSQL_DATABASE MEMCACHE_HOST MEMCACHE_PORT; do
    [[ -n "${!v:-}" ]] || { echo "php-fpm: missing environment variable $v" >&2; exit 2; }
done
setting() { # setting NAME DEFAULT PATTERN: export NAME (DEFAULT if unset); refuse a value off PATTERN
    export "$1=${!1:-$2}"
    [[ "${!1}" =~ ^($3)$ ]] || { echo "php-fpm: $1 must match $3, got '${!1}'" >&2; exit 2; }
}
for v in BACKEND_TIMEOUT_MS HEAD_TIMEOUT_MS IDLE_TIMEOUT_MS; do setting "$v" "" '[1-9][0-9]{0,6}'; done
for v in PORT REDIS_PORT MYSQL_PORT MEMCACHE_PORT; do setting "$v" "" '[1-9][0-9]{0,4}'; done
# The knobs of README "Tuning", with their defaults (PHP 8.2's ini files have no ${VAR:-default}).
setting FPM_MAX_CHILDREN 24 '[1-9][0-9]*'
setting FPM_PERSISTENT 1 '0|1'
setting FPM_JIT off 'off|tracing|function'
setting FPM_SETTINGS preloaded 'preloaded|env'
setting FPM_PARAMS getenv 'getenv|server'
setting SCHED_POLICY batch 'batch|other'

export APP_DIR RUN_DIR MYSQL_TIMEOUT_S FPM_JIT_BUFFER FPM_PRELOAD NOFILE FPM_USER FPM_GROUP
APP_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUN_DIR="$(mkdir -p "$RUN_DIR/tmp" && cd "$RUN_DIR" && pwd)"
rm -f "$RUN_DIR"/php-fpm*.sock
MYSQL_TIMEOUT_S=$(( (BACKEND_TIMEOUT_MS + 999) / 1000 )) # mysqlnd and FPM count whole seconds
# Workaround: PHP 8.2 sets up a run-time cache per request when a JIT buffer exists (README, Workarounds)
FPM_JIT_BUFFER=0; [[ "$FPM_JIT" == off ]] || FPM_JIT_BUFFER=32M
FPM_PRELOAD=""; [[ "$FPM_SETTINGS" == env ]] || FPM_PRELOAD="$APP_DIR/app/preload.php"
# SCHED_BATCH, inherited by PHP-FPM, nginx and all their workers (README, Benchmark-only settings).
chrt "--$SCHED_POLICY" -p 0 $$
# nginx holds a descriptor per client connection (10,000 idle ones must fit): the hard limit.
NOFILE="$(ulimit -Hn)"
[[ "$NOFILE" == unlimited || "$NOFILE" -gt 65536 ]] && NOFILE=65536
ulimit -n "$NOFILE"
# Started as root (a CI box), the workers run as nobody; otherwise as whoever started this.
nginx_user=()
if [[ "$(id -u)" == 0 ]]; then
    FPM_USER=nobody FPM_GROUP="$(id -gn nobody)"
    nginx_user=(-g "user $FPM_USER $FPM_GROUP;")
else
    FPM_USER="$(id -un)" FPM_GROUP="$(id -gn)"
fi

# nginx.conf with the ${VAR}s above replaced (nginx's own variables are lower case).
conf="$(<"$APP_DIR/conf/nginx.conf")"
for v in APP_DIR RUN_DIR HOST PORT BACKEND_TIMEOUT_MS HEAD_TIMEOUT_MS IDLE_TIMEOUT_MS NOFILE; do
    conf="${conf//"\${$v}"/"${!v}"}"
done
printf '%s\n' "$conf" > "$RUN_DIR/nginx.conf"
if [[ "$FPM_SETTINGS" == preloaded ]]; then
    # The settings as constants of a class, preloaded (app/render-settings.php); it holds MariaDB's
    # password: readable by the workers' user only (preloading runs as it).
    (umask 077 && PHP_INI_SCAN_DIR= php8.2 -n "$APP_DIR/app/render-settings.php" > "$RUN_DIR/settings.php")
    chown "$FPM_USER:$FPM_GROUP" "$RUN_DIR/settings.php"
fi

# Workaround: the PHP-FPM master leaves our process group, so we stop it ourselves (README, Workarounds)
fpm_pid="" nginx_pid=""
stop() {
    trap - TERM INT
    [[ -n "$nginx_pid" ]] && kill -TERM "$nginx_pid" 2>/dev/null || true
    [[ -n "$fpm_pid" ]] && kill -TERM "$fpm_pid" 2>/dev/null || true
    wait || true
}
trap 'stop; exit 0' TERM INT

# PHP_INI_SCAN_DIR empty: Debian's conf.d is not read; php.ini loads only what the app uses.
PHP_INI_SCAN_DIR= php-fpm8.2 -F -c "$APP_DIR/conf/php.ini" -y "$APP_DIR/conf/php-fpm.conf" -p "$RUN_DIR" &
fpm_pid=$!
for _ in $(seq 100); do
    [[ -S "$RUN_DIR/php-fpm.sock" && -S "$RUN_DIR/php-fpm-deadline.sock" ]] && break
    kill -0 "$fpm_pid" 2>/dev/null || { echo "php-fpm: php-fpm8.2 exited while starting" >&2; exit 1; }
    sleep 0.05
done
nginx -e stderr -p "$RUN_DIR" -c "$RUN_DIR/nginx.conf" "${nginx_user[@]}" &
nginx_pid=$!

set +e
wait -n "$fpm_pid" "$nginx_pid"
status=$?
echo "php-fpm: a server process exited (status $status); stopping" >&2
stop
exit "$status"
