"""Synthetic soak windows and results.json documents with known behaviour, for the tests of the
soak's detectors, report and comparison (no server, no load)."""
from harness import soak
from harness.soak import verdicts as soak_verdicts

MIB = 2**20


def window(i, seconds=5, rate=1000, p50=1.0, p99=3.0, max_ms=8.0, rss_mib=100.0, answered=None, errors=None, cpu_s=1.0):
    offered = rate * seconds
    return {"i": i, "t_s": i * seconds, "seconds": seconds, "started": 1_800_000_000 + i * seconds, "rate": rate,
            "offered": offered, "answered": offered if answered is None else answered,
            "errors": errors or {"non_2xx": 0, "timeout": 0}, "p50_ms": p50, "p90_ms": None if p99 is None else p99 / 2, "p99_ms": p99,
            "p999_ms": max_ms, "max_ms": max_ms, "mean_ms": p50, "server_cpu_s": cpu_s, "server_cpu_share": cpu_s / seconds,
            "rss_bytes": int(rss_mib * MIB), "pss_bytes": int(rss_mib * MIB * 0.8), "processes": 1, "steal_s": 0.0,
            "foreign_cpu_share": 0.01, "generator_cpu_s": 0.3, "disturbed": False, "raw": f"raw/windows/w{i:05d}.json"}


def doc(windows, stack="java-netty", endpoint="redis", pauses=(), runtime="jvm", env_text="", started="2026-11-24T04:00:00+00:00",
        lead_in="steady"):
    """lead_in: "steady" (a lead-in window like the first), a window dict, or None: a soak recorded
    before lead-ins existed (no "lead_in" key: its first window is taken as one)."""
    d = {"schema": soak.SCHEMA, "schema_version": soak.SCHEMA_VERSION, "started": started, "finished": started,
         "complete": True, "interrupted": False, "refused": None,
         "command": f"make soak STACK={stack} ENDPOINT={endpoint} RATE=1000 DURATION={len(windows) * 5} WINDOW=5",
         "stack": {"name": stack, "language": "Java", "framework": "Netty", "port": 18001},
         "endpoint": endpoint, "env": {}, "env_text": env_text, "settings": soak.SoakSettings(stack, endpoint).as_dict(),
         "plan": {"rate_rps": 1000, "connections": 64, "windows": len(windows), "window_s": 5,
                  "duration_s": 5 * len(windows), "rate_source": "RATE", "connections_source": "the default"},
         "git": {"commit": "0123456789abcdef", "dirty": False}, "machine": {"cpu_model": "AMD EPYC", "cpus": 2},
         "cpu_layout": {"server": "0", "loadgen": "1"}, "limits": {}, "tools": {}, "versions": {},
         "gc": {"runtime": runtime, "log": "raw/gc/gc-<pid>.log", "available": runtime in ("jvm", "node"),
                "why_not": None if runtime in ("jvm", "node") else "no GC log: ...", "pauses": [list(p) for p in pauses]},
         "soak_started": 1_800_000_000.0, "windows": windows, "processes": {}, "verdicts": None}
    if lead_in is not None:
        d["lead_in"] = window(-1) if lead_in == "steady" else lead_in
    d["verdicts"] = soak_verdicts.judge(windows, d["gc"]["pauses"], d["gc"]["available"], d["gc"]["why_not"],
                                        soak_verdicts.Thresholds(), None, d.get("lead_in"), "lead_in" not in d)
    for w in windows:
        w["flags"] = soak_verdicts.window_flags(w, d["verdicts"]["latency"]["threshold_ms"], soak_verdicts.Thresholds())
    return d
