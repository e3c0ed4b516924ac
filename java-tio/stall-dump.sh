#!/usr/bin/env bash
# What a hung JVM is doing, short enough to read in a CI log (stall_dump in stack.toml; PID = the JVM):
# jcmd's thread dump with threads grouped by name (numbers dropped), state and the first frame outside
# the JDK's park and lock internals, largest groups first; then any deadlock jcmd found.
set -euo pipefail
dump=$(jcmd "$PID" Thread.print)
awk '
/^"/ { name = $0; sub(/^"/, "", name); sub(/".*/, "", name); gsub(/[0-9]+/, "#", name); state = ""; frame = ""; next }
/java.lang.Thread.State:/ { state = $2; next }
/^\tat / && frame == "" && $2 !~ /^(jdk\.internal\.|java\.util\.concurrent\.locks\.|java\.util\.concurrent\.ForkJoinPool\.(un)?managedBlock|java\.lang\.Object\.wait)/ {
    frame = $2; sub(/\(java\.base@[^\/]*\//, "(", frame); groups[name "  " state "  " frame]++ }
END { for (g in groups) printf "%5d  %s\n", groups[g], g }' <<<"$dump" | sort -rn | head -40
grep -A40 "^Found .*deadlock" <<<"$dump" || echo "(no deadlock found by jcmd)"
