"""results.json: writing, reading, and the few derived numbers every report shows.

The schema is documented in loadtest/RESULTS.md; SCHEMA_VERSION changes whenever a field changes
meaning or disappears (adding a field does not). The derived numbers (derive()) are computed
once, when a results.json is written, and read back as written (a file older than them gets them on reading).
"""
import os
import pathlib

from harness.accounting import stats
from harness.accounting.cpus import parse_list
from harness.contract.cases import DATA_ENDPOINTS
from harness.reports import store

SCHEMA = "reference-servers/bench-results"
SCHEMA_VERSION = 1
KNEE_FRACTION = 0.9
BOUND_GOAL = 0.75  # the project's goal: every data endpoint should reach this share of its bound
# The ceiling tools run with the backends' CPUs to the backend alone; in a stack's run the load generator
# may share them. When those CPUs were this busy, the backend (not the stack) set the pace.
BACKENDS_SATURATED = 0.95


def knee(points: list[tuple[int, float]]) -> int | None:
    """The knee of throughput vs concurrency: the fewest connections reaching 90% of the peak.
    Past it, more connections buy little throughput and mostly add latency (queueing)."""
    points = [(c, t) for c, t in points if t is not None]
    if not points:
        return None
    peak = max(t for _, t in points)
    return min(c for c, t in points if t >= KNEE_FRACTION * peak)


def write(doc: dict, out_dir: pathlib.Path) -> pathlib.Path:
    return store.write(derive(doc), out_dir / "results.json")


def read(path) -> dict:
    """As written; a file from before the derived figures were written gets them here."""
    doc = store.read(path, "results.json", SCHEMA, SCHEMA_VERSION, "a results.json of this harness")
    return doc if "definitions" in doc else derive(doc)


def link_latest(results_root: pathlib.Path, run_dir: pathlib.Path) -> None:
    latest = results_root / "latest"
    tmp = results_root / ".latest.tmp"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, latest)


def headline(runs: list[dict]) -> dict:
    """An endpoint's headline from the sweep's best run and its repeats (`runs`, the best first)."""
    return {"connections": runs[0]["connections"],
            "throughput_rps": stats.median_and_spread([r.get("throughput_rps") for r in runs]),
            "cpu_us_per_request": stats.median_and_spread([r.get("cpu_us_per_request") for r in runs]),
            "flags": sorted({f for r in runs for f in r["flags"]})}


def closed_loop(levels: list[int], repeats: int, run) -> dict:
    """An endpoint's closed-loop part: one run per level (`run(connections, None)`), the knee and
    the best level, then `repeats - 1` more runs at the best (`run(connections, i)`, i from 1) and
    the headline of all of them. The open loop is added by the caller ("open_loop")."""
    sweep = [run(c, None) for c in levels]
    best = max(sweep, key=lambda r: r.get("throughput_rps") or 0)
    knee_connections = knee([(r["connections"], r.get("throughput_rps")) for r in sweep])
    again = [run(best["connections"], i) for i in range(1, repeats)]
    return {"sweep": sweep, "repeats": again, "open_loop": [], "knee_connections": knee_connections,
            "peak_connections": best["connections"], "headline": headline([best] + again)}


def open_loop_connections(closed: dict) -> int:
    """The connections of an endpoint's open-loop runs (`closed` from closed_loop()). The knee's
    sustained ~90% of the peak in closed loop, so they can carry a fixed rate below it; the peak's
    (often 1024) would mostly measure connection set-up."""
    return closed["knee_connections"] or closed["peak_connections"]


def ceiling_for(doc: dict, endpoint: str, connections: int) -> float | None:
    for c in doc.get("ceilings", []):
        if c["endpoint"] == endpoint and c["connections"] == connections:
            return c.get("throughput_rps")
    return None


def ratio(value, ceiling) -> float | None:
    if value is None or not ceiling:
        return None
    return round(value / ceiling, 3)


def _median(ep: dict | None, figure: str):
    return ((ep or {}).get("headline") or {}).get(figure, {}).get("median")


def _headline_runs(ep: dict) -> list[dict]:
    connections = ep.get("headline", {}).get("connections")
    return [r for r in ep.get("sweep", []) if r.get("connections") == connections] + ep.get("repeats", [])


def backends_busy(doc: dict, ep: dict | None) -> float | None:
    """The median, over the endpoint's headline runs, of the busiest backend CPU's busy share; None
    when the backends share the server's CPUs (then the server's own load is in it) or nothing says."""
    layout = doc.get("cpu_layout") or {}
    backend_cpus = set(parse_list(layout.get("backends") or ""))
    if not ep or not backend_cpus or backend_cpus & set(parse_list(layout.get("server") or "")):
        return None
    busiest = []
    for run in _headline_runs(ep):
        per_cpu = ((run.get("stats") or {}).get("per_cpu_busy")) or {}
        shares = [per_cpu[str(c)] for c in backend_cpus if per_cpu.get(str(c)) is not None]
        if shares:
            busiest.append(max(shares))
    return stats.median(busiest) if busiest else None


def share_of_bound(doc: dict, stack: dict, endpoint: str) -> dict:
    """How near a data endpoint comes to the most its stack can reach there (the share-of-bound goal).

    On one server CPU a data request costs the stack's own HTTP work, at best what its /hello
    costs (1/hello CPU-seconds), plus the backend client's work, at best what the backend's own
    benchmark tool costs (1/ceiling). So bound = 1 / (1/hello + 1/ceiling), and share = data / bound, where
    hello = the stack's /hello headline (median req/s at its best concurrency) in this run,
    ceiling = the endpoint's ceiling at the connections of its headline, measured again right after
    the headline runs (`adjacent_ceiling`: the machine's speed drifts over an hour-long run, and a
    ratio wants both figures from the same minutes), else the one of the run's start,
    data = the endpoint's headline. A generator-saturated headline is the client's limit: for
    /hello the true bound is higher, so the share is at most this (`bound_understated`); for the
    endpoint itself the true rate is higher, so the share is at least this (`data_understated`).
    The ceiling tools had the backends' CPUs to the backend alone; when in the stack's headline runs
    those CPUs were saturated (the backend sharing them with the load generator), the backend set the
    pace, the bound is too high for that run and the share at least this (`backends_saturated`).
    """
    endpoints = stack.get("endpoints") or {}
    ep, hello_ep = endpoints.get(endpoint), endpoints.get("hello")
    connections = (ep or {}).get("headline", {}).get("connections")
    start_ceiling = ceiling_for(doc, endpoint, connections) if connections else None
    adjacent = ((ep or {}).get("adjacent_ceiling") or {}).get("throughput_rps")
    out = {"hello_rps": _median(hello_ep, "throughput_rps"),
           "ceiling_rps": adjacent or start_ceiling,
           "ceiling_source": "adjacent" if adjacent else "start" if start_ceiling else None,
           "start_ceiling_rps": start_ceiling,
           "ceiling_connections": connections,
           "data_rps": _median(ep, "throughput_rps"),
           "bound_rps": None, "share": None,
           "bound_understated": "generator-saturated" in (hello_ep or {}).get("headline", {}).get("flags", []),
           "data_understated": "generator-saturated" in (ep or {}).get("headline", {}).get("flags", []),
           "backends_busy": backends_busy(doc, ep), "backends_saturated": False,
           "below_goal": None}
    out["backends_saturated"] = (out["backends_busy"] or 0) >= BACKENDS_SATURATED
    out["missing"] = [k for k in ("hello", "ceiling", "data") if not out[f"{k}_rps"]]
    if not out["missing"]:
        bound = 1 / (1 / out["hello_rps"] + 1 / out["ceiling_rps"])
        out["bound_rps"] = round(bound, 1)
        out["share"] = round(out["data_rps"] / bound, 3)
        out["below_goal"] = out["share"] < BOUND_GOAL
    return out


def efficiency(ep: dict) -> dict:
    """What a stack's headline throughput on an endpoint costs: requests per second of server CPU
    (1e6 / CPU µs per request) and req/s per MiB of the largest RSS its headline runs reached."""
    cpu_us = _median(ep, "cpu_us_per_request")
    rps = _median(ep, "throughput_rps")
    runs = _headline_runs(ep)
    peaks = [r["stats"]["memory"]["peak_rss_bytes"] for r in runs
             if ((r.get("stats") or {}).get("memory") or {}).get("peak_rss_bytes")]
    peak = max(peaks) if peaks else None
    return {"requests_per_cpu_second": round(1e6 / cpu_us, 1) if cpu_us else None,
            "peak_rss_bytes": peak,
            "rps_per_mib_peak_rss": round(rps / (peak / 2**20), 2) if rps and peak else None}


DEFINITIONS = {
    "share_of_bound": "data endpoints: share = data / bound, bound = 1 / (1/hello + 1/ceiling); hello = the stack's "
                      "/hello headline median req/s (its best concurrency) in this run, ceiling = the endpoint's "
                      "ceiling at the connections of its headline, measured again right after the headline runs "
                      "(ceiling_source adjacent: the endpoint's adjacent_ceiling) or else the one of the run's start "
                      "(ceiling_source start; start_ceiling_rps is that one either way), data = the endpoint's headline "
                      "median req/s. bound_understated: /hello's headline was generator-saturated (the true bound is "
                      "higher: the share is at most this); data_understated: the endpoint's headline was "
                      "(the share is at least this); backends_busy: the median over the headline runs of the busiest "
                      "backend CPU's busy share (null when the backends share the server's CPUs); backends_saturated: "
                      f"backends_busy >= {BACKENDS_SATURATED}, the backend set the pace (the share is at least this). "
                      "share is null when hello, ceiling or data is (see missing). "
                      f"below_goal: share < {BOUND_GOAL}.",
    "efficiency": "requests_per_cpu_second = 1e6 / the headline's median cpu_us_per_request; peak_rss_bytes = the "
                  "largest stats.memory.peak_rss_bytes of the headline runs (the sweep's run at the headline "
                  "connections and the repeats); rps_per_mib_peak_rss = the headline median req/s / that in MiB.",
}


def derive(doc: dict) -> dict:
    """Adds to every benchmarked endpoint its `efficiency`, and to every data endpoint its
    `share_of_bound` (from the figures already in `doc`; recomputed, never read back)."""
    doc["definitions"] = DEFINITIONS
    for stack in doc.get("stacks", []):
        for name, ep in (stack.get("endpoints") or {}).items():
            if not ep.get("headline"):
                continue
            ep["efficiency"] = efficiency(ep)
            if name in DATA_ENDPOINTS:
                ep["share_of_bound"] = share_of_bound(doc, stack, name)
    return doc
