"""The time budget, computed from the settings before anything runs, and the progress line with an ETA.

Estimates are the planned load seconds plus measured-order overheads (tool start-up, a stack's
start and verification); the run prints the estimate first so a user can trade time for
precision before waiting (see README: DURATION, CONCURRENCY, REPEATS, QUICK).
"""
import math
import time

from harness.bench import profiles
from harness.bench.settings import Settings
from harness.contract.cases import DATA_ENDPOINTS

TOOL_OVERHEAD_S = 0.6      # process start, connection set-up, parsing
VERIFY_S = 30.0            # build + verify_stack: measured 18 s for node-cluster on the busy 2-core box; JVM builds take longer
START_S = 8.0              # versions, start, primer for one stack


def endpoint_seconds(s: Settings) -> float:
    closed = (len(s.concurrency) + max(0, s.repeats - 1)) * (s.duration + TOOL_OVERHEAD_S)
    return closed + len(s.open_rates) * (s.open_duration + TOOL_OVERHEAD_S)


def warmup_seconds(s: Settings) -> float:
    """Warm-up goes in rounds of one 1-second run per endpoint, until stable or warmup_max; on a busy
    machine it rarely looks stable, so expect the limit plus the round that crosses it."""
    round_s = len(s.endpoints) * (1 + TOOL_OVERHEAD_S)
    return (math.floor(s.warmup_max / round_s) + 1) * round_s


def measures_adjacent_ceiling(s: Settings, endpoint: str) -> bool:
    """Whether the backend tool's ceiling is measured again beside the endpoint's headline runs."""
    return s.calibrate and endpoint in DATA_ENDPOINTS


def adjacent_ceiling_seconds(s: Settings, endpoint: str) -> float:
    """The time of that ceiling's run (sized by the start's rate); 0 when it is not measured."""
    return backend_ceiling_seconds(s, endpoint, sized=True) if measures_adjacent_ceiling(s, endpoint) else 0.0


def profile_seconds(s: Settings) -> float:
    return sum(len(profiles.PROFILES[n].runs) for n in s.profiles) * (s.profile_duration + TOOL_OVERHEAD_S)


def stack_seconds(s: Settings) -> float:
    sweep = (len(s.endpoints) * endpoint_seconds(s) + sum(adjacent_ceiling_seconds(s, e) for e in s.endpoints)
             if s.sweep else 0.0)
    return VERIFY_S + START_S + warmup_seconds(s) + sweep + profile_seconds(s)


def backend_ceiling_seconds(s: Settings, endpoint: str, sized: bool) -> float:
    """One level of a backend tool's ceiling. sysbench runs for a fixed time; redis-benchmark and
    memcslap take a request count, grown run by run until a run lasts half the duration: about 2.5
    durations per level (measured on the busy 2-core box), one when a rate measured before sizes
    the count (`sized`)."""
    if endpoint == "mysql" or sized:
        return s.calibration_duration + 2 * TOOL_OVERHEAD_S
    return 2.5 * s.calibration_duration + 3 * TOOL_OVERHEAD_S


def calibration_seconds(s: Settings) -> float:
    if not s.calibrate:
        return 0.0
    total = 0.0
    if "hello" in s.endpoints:
        total += len(s.concurrency) * (s.calibration_duration + TOOL_OVERHEAD_S) + 1
    for endpoint in s.endpoints:
        if endpoint in DATA_ENDPOINTS:  # each level after the first is sized by the one before
            total += sum(backend_ceiling_seconds(s, endpoint, sized=i > 0) for i in range(len(s.concurrency)))
    return total


def estimate(s: Settings, stacks: int) -> dict:
    return {"stacks": stacks, "per_stack_s": round(stack_seconds(s)), "calibration_s": round(calibration_seconds(s)),
            "total_s": round(calibration_seconds(s) + stacks * stack_seconds(s))}


def fmt(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s"


class Progress:
    """Prints one line per step with the elapsed time and an ETA scaled by how the run is tracking its plan."""

    def __init__(self, planned_total: float, out=print):
        self.planned_total = max(1.0, planned_total)
        self.planned_done = 0.0
        self.t0 = time.monotonic()
        self.out = out

    def step(self, planned_s: float, message: str | None) -> None:
        """Count `planned_s` of the plan as done; print `message` with the ETA (None: count silently)."""
        self.planned_done += planned_s
        if message is None:
            return
        elapsed = time.monotonic() - self.t0
        pace = elapsed / self.planned_done if self.planned_done else 1.0
        remaining = max(0.0, self.planned_total - self.planned_done) * pace
        pct = min(100, int(100 * self.planned_done / self.planned_total))
        self.out(f"[{fmt(elapsed)} {pct:3d}% ETA {fmt(remaining)}] {message}", flush=True)
