"""Open-loop load with oha: requests are sent at a fixed rate whatever the server does, and
--latency-correction measures each latency from when the request *should* have been sent.

A closed-loop generator (wrk) waits for an answer before sending the next request on a
connection, so a server that stalls also stops the clock: its worst moments are under-counted
(coordinated omission). At a fixed arrival rate below the peak, the corrected percentiles are
what a user arriving at that rate would see.

Random ids: oha picks a random line per request from a file of URLs (--urls-from-file); the file
holds every id 1..10000 once, so ids are uniform like wrk's math.random(1, 10000).
"""
import json
import math
import shutil

from harness.contract.cases import DATA_ENDPOINTS
from harness.loadgen.wrk import IDS, endpoint_path

VERSION = "1.16.0"


def binary() -> str | None:
    import os
    found = shutil.which("oha")
    if found:
        return found
    cargo_bin = os.path.expanduser("~/.cargo/bin/oha")
    return cargo_bin if os.path.exists(cargo_bin) else None


def urls_file(path, base_url: str, endpoint: str):
    """A file of target URLs when the endpoint takes an id, else None (the URL is given directly)."""
    if endpoint not in DATA_ENDPOINTS:
        return None
    path.write_text("".join(f"{base_url}{endpoint_path(endpoint)}{i}\n" for i in range(1, IDS + 1)))
    return path


def command(oha: str, base_url: str, endpoint: str, rate: float, connections: int, duration: float,
            timeout_s: int, urls=None) -> list[str]:
    cmd = [oha, "--no-tui", "--output-format", "json", "-z", f"{max(1, math.ceil(duration))}s",
           "-c", str(connections), "-q", str(max(1, int(rate))), "--latency-correction",
           "-w",  # wait for requests in flight at the deadline instead of counting them as aborted
           "-t", f"{timeout_s}s"]
    if urls is not None:
        return cmd + ["--urls-from-file", str(urls)]
    return cmd + [f"{base_url}{endpoint_path(endpoint)}"]


def _error_kind(message: str) -> str:
    m = message.lower()
    if "timeout" in m or "timed out" in m:
        return "timeout"
    if "broken pipe" in m or "write" in m:
        return "write"
    if "reset" in m:
        return "read"
    if "connect" in m or "refused" in m:
        return "connect"
    if "read" in m or "incomplete" in m or "closed" in m or "eof" in m:
        return "read"
    return "other"


class OhaOutputError(ValueError):
    pass


def parse(stdout: str, target_rate: float, duration: float | None = None) -> dict:
    """`duration` is the configured -z: achieved_fraction = answered / (rate x duration), so waiting for
    the requests in flight at the deadline (-w) does not count as falling behind."""
    try:
        raw = json.loads(stdout[stdout.index("{"):])
    except ValueError:
        raise OhaOutputError("oha printed no JSON:\n" + stdout[-800:]) from None
    summary = raw["summary"]
    codes = {int(k): v for k, v in (raw.get("statusCodeDistribution") or {}).items()}
    errors = {"non_2xx": sum(v for k, v in codes.items() if not 200 <= k < 300),
              "connect": 0, "read": 0, "write": 0, "timeout": 0, "other": 0}
    for message, n in (raw.get("errorDistribution") or {}).items():
        if "aborted due to deadline" in message:
            continue  # requests cut off by -z itself, not failures of the server
        errors[_error_kind(message)] += n
    answered = sum(codes.values())
    pct = raw.get("latencyPercentiles") or {}

    def ms(v):
        return None if v is None else round(v * 1000, 3)
    seconds = summary["total"]
    return {
        "tool": "oha",
        "target_rate_rps": target_rate,
        "requests": answered + sum(v for k, v in errors.items() if k != "non_2xx"),
        "duration_s": round(seconds, 3),
        "throughput_rps": round(summary["requestsPerSec"], 1),
        "achieved_fraction": (round(answered / (target_rate * math.ceil(duration)), 3)
                              if duration and target_rate else None),
        "errors": errors,
        "error_messages": raw.get("errorDistribution") or {},
        "latency_ms": {"p50": ms(pct.get("p50")), "p90": ms(pct.get("p90")), "p99": ms(pct.get("p99")),
                       "p99.9": ms(pct.get("p99.9")), "max": ms(summary.get("slowest")),
                       "mean": ms(summary.get("average"))},
        "latency_corrected": True,
        # The whole percentile curve oha reports (p10 .. p99.99), for the report's latency curves.
        "percentiles_ms": {k[1:]: ms(v) for k, v in pct.items() if k.startswith("p") and v is not None},
        # oha's JSON has only a distribution of per-second rates, not the series: open-loop runs
        # have no per-second throughput (their rate is fixed by construction; achieved_fraction says if it held).
        "per_second_rps": None,
    }
