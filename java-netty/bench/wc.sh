#!/bin/bash
# usage: wc.sh <label> <conns> <url> <pids...>   (records rps and requests per CPU-second of the pids)
ulimit -n $(ulimit -Hn)
label=$1; c=$2; url=$3; shift 3; pids="$*"
cpu() { local t=0; for p in $pids; do for f in /proc/$p/task/*/schedstat; do read a b c < $f 2>/dev/null && t=$((t + a)); done; done; echo $t; }
wait_() { local t=0; for p in $pids; do for f in /proc/$p/task/*/schedstat; do read a b c < $f 2>/dev/null && t=$((t + b)); done; done; echo $t; }
L=$(cut -d' ' -f1-3 /proc/loadavg)
loopcpu() { local t=0; for p in $pids; do for f in /proc/$p/task/*; do case "$(cat $f/comm 2>/dev/null)" in multiThreadIoEv*|nginx*) read a b c < $f/schedstat 2>/dev/null && t=$((t + a));; esac; done; done; echo $t; }
c0=$(cpu); q0=$(wait_); l0=$(loopcpu)
OUT=$(taskset -c 1 wrk -t1 -c$c -d10s --latency ${SCRIPT:+-s $SCRIPT} "$url" 2>&1)
c1=$(cpu); q1=$(wait_); l1=$(loopcpu)
RPS=$(echo "$OUT" | awk '/Requests\/sec/ {print $2}'); TOT=$(echo "$OUT" | awk '/requests in/ {print $1}')
P50=$(echo "$OUT" | awk '$1=="50%" {print $2}'); P99=$(echo "$OUT" | awk '$1=="99%" {print $2}')
ERR=$(echo "$OUT" | grep -E 'Socket errors|Non-2xx' | tr '\n' ' ')
CPUS=$(echo "scale=2; ($c1-$c0)/1000000000" | bc)
QW=$(echo "scale=2; ($q1-$q0)/1000000000" | bc)
PERCPU=$(echo "scale=0; $TOT*1000000000/($c1-$c0)" | bc 2>/dev/null)
LOOPS=$(echo "scale=2; ($l1-$l0)/1000000000" | bc)
PERLOOP=$(echo "scale=0; $TOT*1000000000/($l1-$l0)" | bc 2>/dev/null)
echo "$label c=$c rps=$RPS p50=$P50 p99=$P99 server_cpu_s=$CPUS runq_wait_s=$QW req_per_cpu_s=$PERCPU loop_cpu_s=$LOOPS req_per_loop_cpu_s=$PERLOOP load=[$L] $ERR" | tee -a /tmp/jn/results.txt
