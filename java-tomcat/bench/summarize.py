#!/usr/bin/env python3
"""Group bench.py's results by configuration, endpoint and connections: every run, then medians."""
import collections
import json
import statistics
import sys

rows = [json.loads(line) for f in (sys.argv[1:] or ["bench/results.jsonl"]) for line in open(f)]
groups = collections.OrderedDict()
for r in rows:
    groups.setdefault((r["label"], r["path"].split("?")[0], r["c"]), []).append(r)
print("| config | endpoint | conns | runs | rps per run | median rps | median CPU µs/req | median p99 | socket errors | non-2xx | server CPU share | load1 |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for (label, path, c), rs in groups.items():
    cpu = [r["cpu_us_per_req"] for r in rs if r.get("cpu_us_per_req")]
    share = [r["server_cpu_s"] / 10 for r in rs if "server_cpu_s" in r]
    print(f"| {label} | {path} | {c} | {len(rs)} | {', '.join(format(r['rps'], '.0f') for r in rs)} | "
          f"{statistics.median(r['rps'] for r in rs):.0f} | {round(statistics.median(cpu)) if cpu else '-'} | "
          f"{sorted(r['p99'] for r in rs)[len(rs) // 2]} | {sum(r['errors'] for r in rs)} | {sum(r['non2xx'] for r in rs)} | "
          f"{f'{min(share):.0%}-{max(share):.0%}' if share else '-'} | "
          f"{min(r['load1'] for r in rs):.0f}-{max(r['load1'] for r in rs):.0f} |")
