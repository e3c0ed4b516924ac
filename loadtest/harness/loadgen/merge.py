"""One result from several client hosts' runs of the same load, merged exactly.

Counts add up (requests, bytes, errors, requests per wall-clock second), throughputs add up (the
hosts ran at once), and latency percentiles come from the hosts' histograms added together: wrk
prints every distinct latency (µs) with its count (after wrk's own `stats_correct`, which adds
samples for latencies over twice the mean per-connection interval: the histogram holds more entries
than requests), and percentile() is wrk's own rule, so one host's histogram gives back exactly the
percentiles wrk printed. Averaging per-host percentiles
would be wrong: the p99 of two hosts is not the mean of their p99s.

Open loop the same way: each host's oha writes every answered request to its database, whose
corrected latencies (on_host.oha_durations_ns) are pooled, and oha_percentile() is oha's own rule.
"""
import collections
import json
import math

from harness.loadgen import wrk as loadgen_wrk

PERCENTILES = (50, 90, 99, 99.9)


def percentile(histogram: list[tuple[int, int]], p: float) -> int:
    """wrk's stats_percentile: the smallest value whose cumulative count reaches round(p/100·n + 0.5)."""
    total = sum(c for _, c in histogram)
    if not total:
        return 0
    rank = round((p / 100) * total + 0.5)
    seen = 0
    for value, count in sorted(histogram):
        seen += count
        if seen >= rank:
            return value
    return max(v for v, _ in histogram)


def add_histograms(histograms) -> list[tuple[int, int]]:
    total: collections.Counter = collections.Counter()
    for h in histograms:
        for value, count in h:
            total[value] += count
    return sorted(total.items())


def sent_per_second(stdout: str) -> dict[int, int]:
    """Requests sent per wall-clock second (epoch seconds), from the script's summary line."""
    line = next(l for l in stdout.splitlines() if l.startswith(loadgen_wrk.MARKER))
    return {int(t): n for t, n in json.loads(line[len(loadgen_wrk.MARKER):])["sent_per_second"].items()}


def closed(parts: list[dict]) -> dict:
    """`parts`: each client host's parsed wrk run (loadgen_wrk.parse) with its `histogram` and its
    `stdout`; those with a `failure` are left out (the caller reports them). The merged record has
    the one-box shape, so the reports read it the same way."""
    ok = [p for p in parts if not p.get("failure")]
    if not ok:
        return {"tool": "wrk", "requests": 0, "throughput_rps": None, "failure": "no client host finished its run"}
    histogram = add_histograms(p["histogram"] for p in ok)
    weight = sum(c for _, c in histogram)
    per_second: collections.Counter = collections.Counter()
    for p in ok:
        per_second.update(sent_per_second(p["stdout"]))
    seconds = [n for _, n in sorted(per_second.items())]
    errors = collections.Counter()
    for p in ok:
        errors.update(p["errors"])
    lat = {f"p{q:g}": percentile(histogram, q) / 1000 for q in PERCENTILES}
    lat["max"] = max(p["latency_ms"]["max"] for p in ok)
    lat["mean"] = round(sum(v * c for v, c in histogram) / weight / 1000, 3) if weight else None
    return {
        "tool": "wrk",
        "requests": sum(p["requests"] for p in ok),
        "duration_s": max(p["duration_s"] for p in ok),
        "throughput_rps": round(sum(p["throughput_rps"] for p in ok), 1),
        "bytes": sum(p["bytes"] for p in ok),
        "errors": dict(errors),
        "latency_ms": lat,
        "per_second_rps": seconds[1:-1] if len(seconds) > 2 else seconds,
        "per_second_source": "requests sent per wall-clock second, summed over the client hosts; partial first/last dropped",
        "merged_from": len(ok),
    }


OHA_PERCENTILES = ("10", "25", "50", "75", "90", "95", "99", "99.9", "99.99")


def oha_percentile(sorted_values: list, p: float):
    """oha's rule: the value at index floor(n·p/100) of the sorted latencies."""
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * p / 100))]


def open_loop(parts: list[dict], rate: float, duration: float) -> dict:
    """`parts`: each client host's parsed oha run (loadgen_oha.parse) with its `durations_ns`; the
    offered `rate` is the whole run's (the hosts' shares added up)."""
    if not parts:
        return {"tool": "oha", "target_rate_rps": rate, "requests": 0, "throughput_rps": None,
                "failure": "no client host finished its run"}
    durations = sorted(d for p in parts for d in p["durations_ns"])
    errors = collections.Counter()
    for p in parts:
        errors.update(p["errors"])
    answered = len(durations)

    def ms(ns):
        return round(ns / 1e6, 3)
    curve = {q: ms(oha_percentile(durations, float(q))) for q in OHA_PERCENTILES} if durations else {}
    return {
        "tool": "oha",
        "target_rate_rps": rate,
        "requests": sum(p["requests"] for p in parts),
        "duration_s": max(p["duration_s"] for p in parts),
        "throughput_rps": round(sum(p["throughput_rps"] for p in parts), 1),
        "achieved_fraction": round(answered / (rate * math.ceil(duration)), 3) if rate and duration else None,
        "errors": dict(errors),
        "latency_ms": {"p50": curve.get("50"), "p90": curve.get("90"), "p99": curve.get("99"),
                       "p99.9": curve.get("99.9"), "max": ms(durations[-1]) if durations else None,
                       "mean": ms(sum(durations) / answered) if answered else None},
        "latency_corrected": True,
        "percentiles_ms": curve,
        "per_second_rps": None,
        "merged_from": len(parts),
    }
