#!/usr/bin/env bash
# How the README's figures were measured: the stack pinned to CPU 0, wrk pinned to CPU 1, same run.
#
#   ./bench.sh LABEL "EXTRA JVM FLAGS" CONNECTIONS PATH [PATH ...]
#   e.g. ./bench.sh baseline "" 256 /hello /sleep
#
# Needs the services up (make services-up with your ports exported) and a build (make build STACK=java-voovan
# or mvn -B -q package -DskipTests). Starts the stack with the run command of stack.toml plus the extra
# flags, warms it up (3 s of wrk per path), then runs `wrk -t1 -cN -d10s --latency` per path, twice, and
# prints one line per run with /proc/loadavg (the box is shared: read the figures with that in mind).
set -euo pipefail
cd "$(dirname "$0")"
label=$1 extra=$2 conns=$3
shift 3
# Your own service ports must be exported (a shared box: never the defaults of someone else's services).
: "${REDIS_PORT:?export your REDIS_PORT}" "${MYSQL_PORT:?export your MYSQL_PORT}" "${MEMCACHE_PORT:?export your MEMCACHE_PORT}"
# The rest from defaults.env, as the harness does: the caller's environment wins.
while IFS='=' read -r key value; do
  [[ $key =~ ^[A-Z_]+$ ]] || continue
  [ -n "${!key:-}" ] || export "$key=$value"
done < ../shared-schema/defaults.env
export PORT=${PORT:-18005} STACK_NAME=java-voovan RUN_DIR=${RUN_DIR:-$PWD/../.run/stacks/java-voovan}
: "${JAVA_HOME:?set JAVA_HOME to a JDK 21 or newer}"
export PATH=$JAVA_HOME/bin:$PATH
mkdir -p "$RUN_DIR"
# the previous run's JVM may still be exiting: wait until the port is free
for _ in $(seq 1 100); do
  curl -s -o /dev/null -m 1 "http://127.0.0.1:$PORT/hello" || break
  sleep 0.2
done
run=$(python3 -c 'import tomllib; print(tomllib.load(open("stack.toml", "rb"))["run"])')
# extra flags go last (a later -D wins); a GC given in them replaces the stack's GC flag
case "$extra" in *-XX:+Use*GC*) run=${run/-XX:+UseParallelGC/} ;; esac
run=${run/exec java/exec taskset -c 0 java}
run=${run/-cp /$extra -cp }
log=$RUN_DIR/bench-$label.log
setsid bash -c "$run" >"$log" 2>&1 &
leader=$!
stop() { kill -- -$leader 2>/dev/null || true; wait "$leader" 2>/dev/null || true; }
trap stop EXIT
ready=
for _ in $(seq 1 600); do
  if curl -s -o /dev/null -m 1 "http://127.0.0.1:$PORT/hello"; then ready=1; break; fi
  sleep 0.2
done
[ -n "$ready" ] || { echo "$label: the stack did not answer /hello within 2 minutes (see $log)" >&2; exit 1; }
url() { echo "http://127.0.0.1:$PORT$1"; }
for path in "$@"; do
  taskset -c 1 wrk -t1 -c"$conns" -d3s "$(url "$path")" >/dev/null 2>&1 || true
done
for path in "$@"; do
  for rep in 1 2; do
    load=$(cut -d' ' -f1-3 /proc/loadavg)
    out=$(taskset -c 1 wrk -t1 -c"$conns" -d10s --latency "$(url "$path")" 2>&1 || true)
    rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
    p50=$(awk '$1=="50%" {print $2}' <<<"$out")
    p99=$(awk '$1=="99%" {print $2}' <<<"$out")
    errs=$(grep -E 'Socket errors|Non-2xx|unable' <<<"$out" | tr -s ' ' | tr '\n' ';' || true)
    printf '%-22s %-22s c=%-5s run%s  rps=%-10s p50=%-9s p99=%-9s load=[%s] %s\n' \
      "$label" "$path" "$conns" "$rep" "$rps" "$p50" "$p99" "$load" "${errs:-no errors}"
  done
done
