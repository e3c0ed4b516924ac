#!/usr/bin/env bash
# Foreground JVM (exec), configured only by the environment the harness passes. The stack's knobs are
# environment variables with their defaults here; each is explained and measured in README.md ("Tuning").
set -euo pipefail
cd "$(dirname "$0")"
export TIO_WORKER_THREADS=${TIO_WORKER_THREADS:-2}
export TIO_MYSQL_POOL=${TIO_MYSQL_POOL:-16}
FLAGS="-Xms512m -Xmx512m -XX:+AlwaysPreTouch -XX:+UseParallelGC
 -DTIO_MAX_POOL_SIZE_FOR_GROUP=${TIO_MAX_POOL_SIZE_FOR_GROUP:-4}
 -DTIO_MAX_POOL_SIZE_FOR_TIO=${TIO_MAX_POOL_SIZE_FOR_TIO:-64}
 -Dtio.default.read.buffer.size=20480"
# shellcheck disable=SC2086
exec chrt --"${SCHED_POLICY:-batch}" 0 java $FLAGS -cp "target/classes:target/lib/*" javatio.Main
