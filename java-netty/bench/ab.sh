#!/bin/bash
# usage: ab.sh <title> <url-path> <conns> <rounds> "<flagsA>" "<flagsB>" [lua]  (A on 18002, B on 18012)
cd /tmp/jn
BASE="-XX:+UseSerialGC -Xms64m -Xmx64m -XX:MaxDirectMemorySize=64m -XX:+UseCompactObjectHeaders"
title=$1; path=$2; c=$3; rounds=$4
FLAGS="${5:-$BASE}" ./start.sh A 18002 >> results.txt || { ./stop.sh A; exit 1; }
FLAGS="${6:-$BASE}" ./start.sh B 18012 >> results.txt || { ./stop.sh A B; exit 1; }
for p in 18002 18012; do taskset -c 1 wrk -t1 -c$c -d10s ${SCRIPT:+-s $SCRIPT} http://127.0.0.1:$p$path >/dev/null; done
echo "== A/B $title $(date -u +%T)" >> results.txt
for i in $(seq 1 $rounds); do
  ./wc.sh "$title:A" $c http://127.0.0.1:18002$path $(cat A.pid)
  ./wc.sh "$title:B" $c http://127.0.0.1:18012$path $(cat B.pid)
done
for n in A B; do echo "$title:$n RSS $(grep -E 'VmHWM|VmRSS' /proc/$(cat $n.pid)/status | tr -s ' \t' ' ' | tr '\n' ' ')" >> results.txt; done
./stop.sh A B
