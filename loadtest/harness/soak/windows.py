"""One window of a soak: its oha run and the readings at its boundaries (CPU, memory, foreign load)."""
import pathlib
import subprocess
from dataclasses import dataclass

from harness.accounting import measure
from harness.bench.settings import Settings
from harness.loadgen import oha as loadgen_oha
from harness.soak.settings import SoakSettings

OHA_GRACE_S = 30.0            # beyond the window and the request timeout, before a window's oha is killed


def read_boundary(root: int, backend_pids: dict) -> measure.Snapshot:
    return measure.snapshot([root], backend_pids, memory=True)


def accounting(a: measure.Snapshot, b: measure.Snapshot, acct: measure.Accounting, foreign_max: float) -> dict:
    """The server's CPU and memory over one window, and who else used the machine (measure.between),
    flagged by the benchmark's own rule (measure.flags)."""
    s = measure.between(a, b, acct)
    flags = measure.flags(s, Settings.generator_max, foreign_max)
    return {"server_cpu_s": s["server_cpu_s"], "server_cpu_share": s["server_cpu_share"],
            "rss_bytes": b.rss, "pss_bytes": b.pss, "processes": b.processes, "steal_s": s["steal_s"],
            "foreign_cpu_share": s["foreign_cpu_share"], "generator_cpu_s": s["generator_cpu_s"],
            "generator_cpu_share": s["generator_cpu_share"], "harness_cpu_s": s["harness_cpu_s"],
            "generator_saturated": "generator-saturated" in flags, "disturbed": "disturbed" in flags}


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
