#!/bin/bash
# The README's headline figures: java-netty (final flags) vs nginx, /sleep, 1024 connections, peak RSS.
cd /tmp/jn; source ng
P=$(cat final.pid)
echo "== FINAL $(date -u +%FT%T) flags: $(tr '\0' ' ' < /proc/$P/cmdline | cut -c1-400)" >> results.txt
taskset -c 1 wrk -t1 -c256 -d30s http://127.0.0.1:18002/hello >/dev/null; for u in /sleep "/redis?id=42" "/mysql?id=42" "/memcache?id=42"; do taskset -c 1 wrk -t1 -c256 -d8s "http://127.0.0.1:18002$u" >/dev/null; done
for i in 1 2 3; do
  ./wc.sh final-netty-hello 256 http://127.0.0.1:18002/hello $P
  ./wc.sh final-nginx-hello 256 http://127.0.0.1:18902/hello $NG
done
for i in 1 2; do ./wc.sh final-netty-sleep 256 http://127.0.0.1:18002/sleep $P; done
for u in /hello /sleep "/redis?id=42" "/mysql?id=42" "/memcache?id=42"; do ./wc.sh "final-1024$u" 1024 "http://127.0.0.1:18002$u" $P; done
echo "final RSS after sweep: $(grep -E 'VmHWM|VmRSS' /proc/$P/status | tr -s ' \t' ' ' | tr '\n' ' ')" | tee -a results.txt
