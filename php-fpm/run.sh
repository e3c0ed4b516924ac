#!/usr/bin/env bash
# Starts PHP-FPM and nginx as two foreground processes, their configuration rendered from conf/
# into $RUN_DIR; stops both on SIGTERM/SIGINT (and the other one when either exits).
set -euo pipefail

for v in HOST PORT RUN_DIR BACKEND_TIMEOUT_MS HEAD_TIMEOUT_MS IDLE_TIMEOUT_MS REDIS_HOST REDIS_PORT \
         MYSQL_HOST MYSQL_PORT MYSQL_USER MYSQL_PASSWORD MYSQL_DATABASE MEMCACHE_HOST MEMCACHE_PORT; do
    if [[ -z "${!v:-}" ]]; then
        echo "php-fpm: missing environment variable $v" >&2
        exit 2
    fi
done
for v in BACKEND_TIMEOUT_MS HEAD_TIMEOUT_MS IDLE_TIMEOUT_MS; do
    [[ "${!v}" =~ ^[1-9][0-9]*$ ]] || { echo "php-fpm: $v must be a positive integer (milliseconds)" >&2; exit 2; }
done

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
app="$here/app"
run_dir="$(mkdir -p "$RUN_DIR" && cd "$RUN_DIR" && pwd)"
mkdir -p "$run_dir/tmp"
rm -f "$run_dir/php-fpm.sock" "$run_dir/php-fpm-deadline.sock"

# Tuning (see README "Tuning"): the FPM pool size and the JIT (FPM_MAX_CHILDREN and FPM_JIT
# override them, for measuring the alternatives). JIT off means no JIT buffer at all: a started
# JIT, even set to off, makes every request initialise a run-time cache slot for each of PHP's
# ~3,300 internal functions.
max_children="${FPM_MAX_CHILDREN:-24}"
[[ "$max_children" =~ ^[1-9][0-9]*$ ]] || { echo "php-fpm: FPM_MAX_CHILDREN must be a positive integer" >&2; exit 2; }
# Workaround: PHP 8.2 sets up a run-time cache per request when a JIT buffer exists (README, Workarounds)
jit="${FPM_JIT:-off}"
case "$jit" in
    off) jit_buffer=0 ;;
    tracing|function) jit_buffer=32M ;;
    *) echo "php-fpm: FPM_JIT must be off, tracing or function" >&2; exit 2 ;;
esac

# Persistent backend connections (FPM_PERSISTENT=0: a connection per request, the seeds' setup, kept
# for measuring); read by app/render-settings.php.
export FPM_PERSISTENT="${FPM_PERSISTENT:-1}"
[[ "$FPM_PERSISTENT" == [01] ]] || { echo "php-fpm: FPM_PERSISTENT must be 1 or 0" >&2; exit 2; }

# Scheduling policy (README "Tuning"; SCHED_POLICY=other switches it off): SCHED_BATCH, inherited by
# PHP-FPM, nginx and all their workers, so a worker woken by its socket or by the end of its sleep
# waits for the running process to block instead of preempting it.
sched="${SCHED_POLICY:-batch}"
case "$sched" in
    batch|other) chrt "--$sched" -p 0 $$ ;;
    *) echo "php-fpm: SCHED_POLICY must be batch or other" >&2; exit 2 ;;
esac

# Descriptors: nginx holds a socket per client connection (10,000 idle keep-alive ones must fit)
# and one more per request in flight to PHP-FPM. Raise the soft limit to the hard one (capped at
# 65536); nginx gets the same through worker_rlimit_nofile, and as many worker_connections.
nofile="$(ulimit -Hn)"
[[ "$nofile" == unlimited || "$nofile" -gt 65536 ]] && nofile=65536
ulimit -n "$nofile"

user_nginx="" user_fpm="" listen_owner="" preload_user=""
if [[ "$(id -u)" == 0 ]]; then
    # Started as root (a CI box): the workers run as nobody, never as root.
    group="$(id -gn nobody)"
    user_nginx="user nobody $group;"
    user_fpm=$'user = nobody\ngroup = '"$group"
    listen_owner=$'listen.owner = nobody\nlisten.group = '"$group"
    preload_user="opcache.preload_user = nobody"
fi

render() { # render <template> <output>: replace the @NAME@ placeholders
    local text
    text="$(<"$1")"
    text="${text//@RUN_DIR@/$run_dir}"
    text="${text//@APP@/$app}"
    text="${text//@HOST@/$HOST}"
    text="${text//@PORT@/$PORT}"
    text="${text//@TIMEOUT_MS@/$BACKEND_TIMEOUT_MS}"
    text="${text//@MYSQL_TIMEOUT_S@/$(( (BACKEND_TIMEOUT_MS + 999) / 1000 ))}"
    text="${text//@MAX_CHILDREN@/$max_children}"
    text="${text//@JIT@/$jit}"
    text="${text//@JIT_BUFFER@/$jit_buffer}"
    text="${text//@NOFILE@/$nofile}"
    text="${text//@HEAD_TIMEOUT_MS@/$HEAD_TIMEOUT_MS}"
    text="${text//@IDLE_TIMEOUT_MS@/$IDLE_TIMEOUT_MS}"
    text="${text//@USER@/${3:-}}"
    text="${text//@LISTEN_OWNER@/$listen_owner}"
    text="${text//@PRELOAD_USER@/$preload_user}"
    printf '%s\n' "$text" > "$2"
}
render "$here/conf/nginx.conf" "$run_dir/nginx.conf" "$user_nginx"
render "$here/conf/fastcgi_params.conf" "$run_dir/fastcgi_params.conf"
render "$here/conf/refusals.conf" "$run_dir/refusals.conf"
render "$here/conf/php-fpm.conf" "$run_dir/php-fpm.conf" "$user_fpm"
render "$here/conf/php.ini" "$run_dir/php.ini"
render "$here/conf/preload.php" "$run_dir/preload.php"
# The settings the handlers read, rendered once as PHP constants (app/render-settings.php).
# It holds MariaDB's password: readable by the workers' user only (preloading runs as it).
(umask 077 && PHP_INI_SCAN_DIR= php8.2 -n "$app/render-settings.php" > "$run_dir/settings.php")
if [[ "$(id -u)" == 0 ]]; then
    chgrp "$group" "$run_dir/settings.php" && chmod 640 "$run_dir/settings.php"
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

# -c: our php.ini instead of /etc/php/8.2/fpm/php.ini; -y: our pool; -p: prefix for relative paths;
# -F: foreground. PHP_INI_SCAN_DIR empty: Debian's conf.d is not read, php.ini loads the
# extensions the app uses and no others (README, Tuning: every loaded function costs each request).
PHP_INI_SCAN_DIR= php-fpm8.2 -F -c "$run_dir/php.ini" -y "$run_dir/php-fpm.conf" -p "$run_dir" &
fpm_pid=$!
for _ in $(seq 100); do
    [[ -S "$run_dir/php-fpm.sock" && -S "$run_dir/php-fpm-deadline.sock" ]] && break
    kill -0 "$fpm_pid" 2>/dev/null || { echo "php-fpm: php-fpm8.2 exited while starting" >&2; exit 1; }
    sleep 0.05
done

# -e: error log before the configuration is read; -p/-c: nothing read or written under /etc or /var.
nginx -e stderr -p "$run_dir" -c "$run_dir/nginx.conf" &
nginx_pid=$!

# Whichever exits first, stop the other one too.
set +e
wait -n "$fpm_pid" "$nginx_pid"
status=$?
echo "php-fpm: a server process exited (status $status); stopping" >&2
stop
exit "$status"
