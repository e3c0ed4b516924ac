"""One window of a soak: its oha run and the readings at its boundaries (CPU, memory, foreign load)."""
import os
import pathlib
import resource
import subprocess
import time
from dataclasses import dataclass

from harness.accounting import measure, procstats
from harness.bench.settings import Settings
from harness.loadgen import oha as loadgen_oha
from harness.soak.settings import SoakSettings

OHA_GRACE_S = 30.0            # beyond the window and the request timeout, before a window's oha is killed


@dataclass
class Reading:
    """Everything read at one window boundary; two consecutive readings make a window's accounting."""
    mono: float
    server_cpu: float
    known_cpu: dict
    others: dict
    busy: float
    steal: float
    total: float
    per_cpu: dict
    harness_cpu: float
    children_cpu: float
    rss: int
    pss: int
    processes: int
    started: dict  # pid -> start time (epoch) of the server tree's processes


def read_boundary(root: int, backend_pids: dict) -> Reading:
    procs = procstats.processes()
    tree = procstats.tree(root, procs)
    known = {os.getpid()} | {p for p in backend_pids.values() if p} | set(tree)
    rss = pss = 0
    for pid in tree:
        r, p = procstats.memory_bytes(pid)
        rss, pss = rss + r, pss + p
    busy, steal, total, per = procstats.machine_cpu_seconds()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Reading(time.monotonic(), procstats.tree_cpu_seconds(tree, procs),
                   {n: procstats.cpu_seconds(p) for n, p in backend_pids.items() if p},
                   procstats.other_processes_cpu(known, procs), busy, steal, total, per,
                   me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, rss, pss, len(tree),
                   {pid: procs[pid].started for pid in tree if pid in procs})


def accounting(a: Reading, b: Reading, acct: measure.Accounting, foreign_max: float) -> dict:
    """The server's CPU and memory over one window, and who else used the machine (measure.account)."""
    wall = b.mono - a.mono
    s = measure.account(wall, b.server_cpu - a.server_cpu,
                        {k: b.known_cpu.get(k, 0) - v for k, v in a.known_cpu.items()},
                        max(0.0, b.children_cpu - a.children_cpu), b.harness_cpu - a.harness_cpu,
                        b.busy - a.busy, b.total - a.total, procstats.cpu_delta(a.others, b.others), b.steal - a.steal,
                        {c: (b.per_cpu[c][0] - a.per_cpu[c][0]) / (b.per_cpu[c][1] - a.per_cpu[c][1])
                         for c in b.per_cpu if c in a.per_cpu and b.per_cpu[c][1] > a.per_cpu[c][1]}, acct)
    return {"server_cpu_s": s["server_cpu_s"], "server_cpu_share": s["server_cpu_share"],
            "rss_bytes": b.rss, "pss_bytes": b.pss, "processes": b.processes, "steal_s": s["steal_s"],
            "foreign_cpu_share": s["foreign_cpu_share"], "generator_cpu_s": s["generator_cpu_s"],
            "generator_cpu_share": s["generator_cpu_share"], "harness_cpu_s": s["harness_cpu_s"],
            "generator_saturated": bool(s["generator_cpu_share"] is not None and s["generator_cpu_share"] > Settings.generator_max),
            "disturbed": bool(s["foreign_cpu_share"] is not None and s["foreign_cpu_share"] > foreign_max)}


@dataclass
class WindowRun:
    i: int
    proc: subprocess.Popen
    started_wall: float
    started_mono: float
    out: pathlib.Path


def window_record(i: int, cfg: SoakSettings, rate: int, wall: float, raw: str, stdout: str, returncode: int | None) -> dict:
    """One window from its oha JSON: answered/offered, errors, corrected percentiles."""
    rec = {"i": i, "t_s": i * cfg.window, "seconds": cfg.window, "started": round(wall, 3), "rate": rate,
           "offered": rate * cfg.window, "raw": raw}
    try:
        r = loadgen_oha.parse(stdout, rate, cfg.window)
    except (loadgen_oha.OhaOutputError, KeyError) as e:
        rec.update(answered=0, errors={"other": 0}, p50_ms=None, p90_ms=None, p99_ms=None, p999_ms=None,
                   max_ms=None, mean_ms=None, failure=f"oha exit {returncode}: {str(e).splitlines()[0]}")
        return rec
    socket_errors = sum(v for k, v in r["errors"].items() if k != "non_2xx")
    lat = r["latency_ms"]
    rec.update(answered=r["requests"] - socket_errors, errors=r["errors"], p50_ms=lat["p50"], p90_ms=lat["p90"],
               p99_ms=lat["p99"], p999_ms=lat["p99.9"], max_ms=lat["max"], mean_ms=lat["mean"])
    return rec
