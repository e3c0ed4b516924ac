#!/usr/bin/env bash
# Foreground JVM (exec), configured only by the environment the harness passes. The stack's knobs are
# environment variables with their defaults here; each is explained and measured in README.md ("Tuning").
set -euo pipefail
cd "$(dirname "$0")"
export TIO_WORKER_THREADS=${TIO_WORKER_THREADS:-2}
export TIO_MYSQL_POOL=${TIO_MYSQL_POOL:-16}
FLAGS="-Xms512m -Xmx512m -XX:+AlwaysPreTouch -XX:+UseParallelGC"
# shellcheck disable=SC2086
exec chrt --"${SCHED_POLICY:-batch}" 0 java $FLAGS -cp "target/classes:target/lib/*" javatio.Main
