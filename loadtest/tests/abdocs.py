"""Synthetic ab.json documents (rounds with known figures) for the tests of `make ab` and `make compare`."""
from harness import ab


def ab_round(side, i, rps, cpu, p99, rss, flags=(), errors=0):
    closed = {"kind": "closed", "throughput_rps": rps, "cpu_us_per_request": cpu, "latency_ms": {"p99": p99},
              "errors": {"non_2xx": errors, "timeout": 0}, "flags": list(flags),
              "stats": {"steal_s": 0.2, "foreign_cpu_share": 0.15 if "disturbed" in flags else 0.01,
                        "memory": {"peak_rss_bytes": rss}}}
    return {"round": i, "side": side, "start_s": 1.0, "proof": "6 golden cases of /hello passed", "warmup": None,
            "closed": closed, "open": None, "figures": ab.figures(closed, None), "flags": list(flags)}


def ab_doc(rounds) -> dict:
    s = ab.AbSettings("node-cluster", "hello", {}, {"WORKERS": "1"})
    return {"schema": ab.SCHEMA, "schema_version": ab.SCHEMA_VERSION, "started": "2026-11-24T10:00:00+00:00",
            "complete": True, "refused": None, "command": "make ab STACK=node-cluster ENDPOINT=hello A='' B=WORKERS=1",
            "stack": {"name": "node-cluster"}, "endpoint": "hello",
            "sides": {"A": {"env": {}, "text": ""}, "B": {"env": {"WORKERS": "1"}, "text": "WORKERS=1"}},
            "settings": s.knobs(), "git": {"commit": "0123456789abcdef", "dirty": False},
            "machine": {"cpu_model": "AMD EPYC", "cpus": 2}, "cpu_layout": {"server": "0", "loadgen": "1"},
            "rounds": rounds}
