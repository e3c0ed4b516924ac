"""What the harness does on one host of a multi-host run, called over ssh as `python -m harness
on-host <what>`; each prints one JSON document on stdout for the controlling harness to read.

The same accounting as a one-box run, read where it happens: a generator's CPU and the host's
foreign load and steal on a client host (measure.run), the server tree's CPU and RSS on the server
host, the backends' on the backend host. Nothing here keeps state between calls.

Every call is a new process, several per load run: the bench modules only `settle` and `ceiling`
use are imported there, not by every `sample`.
"""
import contextlib
import json
import os
import pathlib
import socket
import statistics
import time

from harness import services, stacks, verify as verifier
from harness.accounting import measure, procstats
from harness.bench import machine
from harness.config import SERVICES
from harness.contract import deviations
from harness.contract.checking import Target
from harness.loadgen import oha as loadgen_oha
from harness.services import backends as backend_clients


def describe() -> dict:
    return {**machine.describe(), "tools": machine.tool_versions(None), "loadavg": machine.loadavg()}


def mysql() -> dict:
    """The thread handling of the MariaDB this host reaches, which shapes the /mysql ceiling; None when unread."""
    return {"thread_handling": backend_clients.mysql_thread_handling()}


def load(cmd: list[str], timeout_s: float, oha_db: str | None = None) -> dict:
    """Run one generator (wrk, oha) to its end, with this host's accounting: every CPU of the host is
    the generator's, none the server's. `oha_db`: the --db-url file oha wrote, whose every answered
    request's latency (corrected, in ns) goes back with the result, for an exact merge."""
    if cmd and cmd[0] == "oha":
        cmd = [loadgen_oha.binary() or "oha", *cmd[1:]]
    cpus = sorted(os.sched_getaffinity(0))
    run = measure.run(cmd, measure.Accounting(None, {}, [], cpus), timeout_s, sample_memory=False)
    out = {"cmd": run.cmd, "returncode": run.returncode, "stdout": run.stdout, "stderr": run.stderr,
           "wall_s": round(run.wall_s, 3), "stats": run.stats}
    if oha_db:
        out["durations_ns"] = oha_durations_ns(oha_db)
    return out


def oha_durations_ns(path: str) -> list[int] | None:
    """oha's per-request database: `duration` is end - start_latency_correction, the corrected
    latency its own percentiles are taken from (they are reproduced from this exactly)."""
    import sqlite3
    if not os.path.exists(path):
        return None
    try:
        with contextlib.closing(sqlite3.connect(path)) as db:
            return sorted(round(d * 1e9) for (d,) in db.execute("SELECT duration FROM oha"))
    finally:
        os.unlink(path)


def sample(root: int | None, backends: bool = False) -> dict:
    """A snapshot (measure.snapshot, as a one-box run reads) to subtract from the next one: the tree
    under `root`, or with `backends` the services this host's harness runs, and the machine."""
    roots = [p for p in (services.pid(n) for n in SERVICES) if p] if backends else [root] if root else []
    return measure.snapshot(roots, {}, memory=True).as_json()


def delta(before: dict, after: dict) -> dict:
    """Two samples of one host -> the accounting of the time between them: the tree's CPU and RSS,
    and what else used the host. Short-lived on-host processes took the samples, so the generator
    and harness columns of a one-box run have no meaning here."""
    a, b = measure.Snapshot.from_json(before), measure.Snapshot.from_json(after)
    wall, capacity, busy, steal = b.mono - a.mono, b.total - a.total, b.busy - a.busy, b.steal - a.steal
    tree = b.tree_cpu - a.tree_cpu
    other = min(procstats.cpu_delta(a.others, b.others), max(0.0, busy - steal - tree))
    return {"wall_s": round(wall, 3), "tree_cpu_s": round(tree, 3),
            "tree_cpu_share": round(tree / capacity, 3) if capacity else None,
            "tree_rss_bytes": b.rss, "machine_busy_s": round(busy, 3),
            "machine_capacity_s": round(capacity, 3), "steal_s": round(steal, 3),
            "other_processes_cpu_s": round(other, 3),
            "foreign_cpu_share": round((other + steal) / capacity, 3) if capacity else None}


def rtt(address: str, port: int, count: int = 20) -> dict:
    """TCP connect round trips to address:port (the handshake is one round trip), in ms."""
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        with socket.create_connection((address, port), timeout=5):
            times.append((time.perf_counter() - t0) * 1000)
    return {"to": f"{address}:{port}", "samples": count, "median_ms": round(statistics.median(times), 3),
            "min_ms": round(min(times), 3), "max_ms": round(max(times), 3),
            "method": "TCP connect time (one SYN / SYN-ACK round trip)"}


def settle(host: str, port: int) -> dict:
    """Until the stack answers /hello quickly again, seen from this host (bench.endpoint.settle)."""
    from harness.bench import endpoint as endpoint_runner
    return {"settle_s": endpoint_runner.settle(host, port)}


def ceiling(endpoint: str, connections: int, seconds: float, expected_rps: float | None) -> dict:
    """The backend's own tool from this host (the server host: where the stack is the backend's
    client), every CPU of the host its own; its output comes back as `raw_text`."""
    from harness.bench import calibrate
    import tempfile

    acct = measure.Accounting(None, {}, [], sorted(os.sched_getaffinity(0)))
    with tempfile.TemporaryDirectory() as raw:
        rec = calibrate.backend_ceiling(endpoint, connections, seconds, [], acct, pathlib.Path(raw), "ceiling.txt",
                                        expected_rps=expected_rps)
        found = pathlib.Path(raw, "ceiling.txt")
        rec["raw_text"] = found.read_text() if found.exists() else ""
    return rec


def verify(stack_name: str, host: str, port: int) -> dict:
    """The checks a multi-host run makes across the network (verify.ACROSS_NETWORK), from this host."""
    import sys

    (stack,) = stacks.select(stack_name)
    target = Target(stack.name, host, port, deviations=deviations.by_case(stack.deviations))
    checks = verifier.run_checks(target, verifier.ACROSS_NETWORK, report=lambda line: print(line, file=sys.stderr))
    return {"ok": all(c.accepted for c in checks), "passed": sum(c.ok and not c.skipped for c in checks),
            "failed": [c.name for c in checks if not c.accepted], "skipped": [c.name for c in checks if c.skipped],
            "deviated": [c.name for c in checks if c.known_deviation],
            "deviations": [d for c in checks if c.known_deviation for d in c.deviations],
            "checks": [{"name": c.name, "ok": c.ok, "detail": c.detail} for c in checks],
            "from": os.uname().nodename, "checks_run": [f.__name__ for f in verifier.ACROSS_NETWORK]}


def print_json(doc: dict) -> None:
    print(json.dumps(doc))
