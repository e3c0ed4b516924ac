#!/usr/bin/env bash
# One measured configuration: the server pinned to CPU 0, wrk pinned to CPU 1, on the same machine.
#   ./bench.sh "<JVM flags>" <path> <connections> [runs] [extra wrk arguments...]
# Example (what run.sh uses):
#   ./bench.sh "$(sed -n 's/^FLAGS="\(.*\)"/\1/p' run.sh)" /hello 256 2
# Needs the services up (make services-up with your ports exported), a JDK >= 21 in JAVA_HOME, wrk.
# Each run: 3 s warm-up (discarded), then `wrk -t1 -c<connections> -d8s --latency`; /proc/loadavg is
# printed before each run because the box is shared.
set -euo pipefail
cd "$(dirname "$0")"
flags=$1 path=$2 conns=$3 runs=${4:-2}
shift $(( $# < 4 ? $# : 4 ))
extra=("$@")   # e.g. -H "Connection: close" (a new connection per request, like the seed's ab)
while IFS='=' read -r k v; do
  [[ $k =~ ^[A-Z_]+$ ]] && [ -z "${!k:-}" ] && export "$k=$v"
done < ../shared-schema/defaults.env
export PORT=18004 STACK_NAME=java-tio
java=${JAVA_HOME:?set JAVA_HOME to a JDK >= 21}/bin/java
# shellcheck disable=SC2086
taskset -c 0 "$java" $flags -cp "target/classes:target/lib/*" javatio.Main > "${TMPDIR:-/tmp}/java-tio-bench.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  curl -fs "http://$HOST:$PORT/hello" >/dev/null 2>&1 && break
  sleep 0.2
done
url="http://$HOST:$PORT$path"
[[ $path == /redis || $path == /mysql || $path == /memcache ]] && url="$url?id=42"
taskset -c 1 wrk -t1 -c"$conns" -d3s "${extra[@]}" "$url" >/dev/null
for i in $(seq "$runs"); do
  echo "# run $i: loadavg $(cut -d' ' -f1-3 /proc/loadavg); wrk -t1 -c$conns -d8s --latency ${extra[*]} $url"
  taskset -c 1 wrk -t1 -c"$conns" -d8s --latency "${extra[@]}" "$url" \
    | grep -E "Requests/sec|Latency |50%|99%|Socket errors|Non-2xx|requests in" | sed 's/^/  /'
done
