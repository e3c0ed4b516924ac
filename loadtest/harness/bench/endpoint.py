"""One endpoint of one stack, measured the same way by the one-box and the multi-host run: each
closed-loop level after the stack has settled, repeats of the best level, the backend's ceiling
beside the headline (data endpoints), then the open-loop rates at fractions of the headline's peak.

What differs between one box and several hosts (where a load runs, where the ceiling is measured,
how progress is told) is the `Where` each run passes in.
"""
import time
from typing import Protocol

from harness.bench import plan
from harness.bench.settings import Settings
from harness.contract.http_client import fetch
from harness.reports import results

SETTLE_MAX = 10.0  # seconds to wait for a stack to drain the previous run's queue
SETTLE_FAST = 0.2  # ... until GET /hello answers within this


def settle(host: str, port: int) -> float:
    """Wait (at most SETTLE_MAX s) until /hello answers quickly again: work queued by the previous
    run (1024 connections' worth of backend calls) must not spill into the next measurement."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < SETTLE_MAX:
        t = time.monotonic()
        try:
            if fetch(host, port, "GET", "/hello", 2.0).status == 200 and time.monotonic() - t < SETTLE_FAST:
                break
        except Exception:  # noqa: BLE001 - not answering yet is what we wait out
            pass
        time.sleep(0.1)
    return round(time.monotonic() - t0, 2)


class Where(Protocol):
    s: Settings
    doc: dict  # the run's results.json so far (the start's ceilings)

    def settle(self, stack) -> float: ...

    def load_closed(self, stack, endpoint: str, connections: int, duration: float, raw_name: str) -> dict: ...

    def load_open(self, stack, endpoint: str, rate: float, connections: int, raw_name: str) -> dict: ...

    def adjacent_ceiling(self, stack, endpoint: str, connections: int) -> dict: ...

    def open_loop_unavailable(self) -> str | None: ...

    def tell(self, planned_s: float, line: str) -> None: ...

    def origin(self, record: dict) -> str: ...


def measure(where: Where, stack, endpoint: str) -> dict:
    s = where.s

    def closed(c: int, repeat: int | None) -> dict:
        settled = where.settle(stack)
        name = f"{stack.name}-{endpoint}-c{c}" + (f"-repeat{repeat}" if repeat else "")
        rec = where.load_closed(stack, endpoint, c, s.duration, f"{name}.txt")
        rec["settle_s"] = settled
        if repeat:
            said = f"req/s (repeat {repeat}) "
        else:
            ratio = results.ratio(rec.get("throughput_rps"), results.ceiling_for(where.doc, endpoint, c))
            said = (f"req/s p99 {(rec.get('latency_ms') or {}).get('p99') or 0:8.2f} ms "
                    f"{'' if ratio is None else f'{ratio:5.0%} of ceiling '}")
        where.tell(s.duration + plan.TOOL_OVERHEAD_S,
                   f"{stack.name:14} {endpoint:8} c={c:<5} {rec.get('throughput_rps') or 0:>10,.0f} {said}"
                   f"{where.origin(rec)}{' '.join(rec['flags'])}")
        return rec

    out = results.closed_loop(s.concurrency, s.repeats, closed)
    if plan.measures_adjacent_ceiling(s, endpoint):
        where.settle(stack)
        out["adjacent_ceiling"] = where.adjacent_ceiling(stack, endpoint, out["headline"]["connections"])
    peak = out["headline"]["throughput_rps"]["median"]
    for frac in s.open_rates:
        why_not = where.open_loop_unavailable()
        if why_not:
            out["open_loop"].append({"kind": "open", "fraction_of_peak": frac, "skipped": why_not})
            continue
        if not peak:
            continue
        rate = peak * frac
        settled = where.settle(stack)
        rec = where.load_open(stack, endpoint, rate, results.open_loop_connections(out),
                              f"{stack.name}-{endpoint}-open{int(frac * 100)}.txt")
        rec["fraction_of_peak"] = frac
        rec["settle_s"] = settled
        out["open_loop"].append(rec)
        lat = rec.get("latency_ms") or {}
        where.tell(s.open_duration + plan.TOOL_OVERHEAD_S,
                   f"{stack.name:14} {endpoint:8} open {frac:.0%} = {rate:,.0f} req/s: answered "
                   f"{rec.get('achieved_fraction') or 0:.0%} of offered, p99 {lat.get('p99') or 0:.2f} ms p99.9 "
                   f"{lat.get('p99.9') or 0:.2f} ms {where.origin(rec)}{' '.join(rec['flags'])}")
    return out
