"""The harness's statistics, in one place: the median, the spread of repeated runs, and whether two
sets of runs differ by more than their own noise.

Runs on a shared 2-core VM are few (3 to 5 a side) and their noise is neither normal nor steady
(hypervisor steal comes in bursts), so nothing here assumes a distribution: the verdict compares
ranks and ranges only, and its false-positive rate for identical sides is bounded by counting
(false_positive_bound).
"""
import math
import statistics
from dataclasses import asdict, dataclass

MIN_RUNS = 3  # with 2 runs a side, identical sides would be called real up to a third of the time
REAL = "real difference"
NOISE = "within the noise of this run"
UNKNOWN = "cannot tell"


def present(values) -> list[float]:
    return [v for v in values if v is not None]


def median(values) -> float | None:
    """The median of the values that are not None (None when there are none). Even counts average
    the middle two (statistics.median), so every caller gets the same number for the same runs."""
    values = present(values)
    return statistics.median(values) if values else None


def spread(values) -> float | None:
    """Highest minus lowest: with three to five runs, the honest width of what was seen."""
    values = present(values)
    return max(values) - min(values) if values else None


def median_and_spread(values, digits: int | None = 1) -> dict:
    """{median, min, max, spread_pct, n}: spread_pct is the range as a percentage of the median.
    `digits` rounds the figures (results.json's req/s and µs); None keeps them as measured (a p99
    of 5.41 ms must not become 5.4)."""
    values = present(values)
    if not values:
        return {"median": None, "min": None, "max": None, "spread_pct": None, "n": 0}
    med = median(values)
    pct = spread(values) / med * 100 if med else None

    def r(v):
        return v if digits is None or v is None else round(v, digits)
    return {"median": r(med), "min": r(min(values)), "max": r(max(values)),
            "spread_pct": round(pct, 1) if pct is not None else None, "n": len(values)}


def false_positive_bound(n_a: int, n_b: int) -> float:
    """How often identical sides would be called a real difference, at most.

    When A and B are the same thing measured in turn, every assignment of the n_a + n_b ranks to
    the two sides is equally likely (the runs are exchangeable), and only 2 of the C(n_a + n_b, n_a)
    assignments put one side's runs all above the other's, which the verdict requires. So this holds
    whatever the noise's distribution: 10% at 3 runs a side, 2.9% at 4, 0.8% at 5. The second
    condition (the medians further apart than either side's range) rejects part of those 2, so the
    real rate is lower: about 4% at 3 runs a side for normal noise, 2-4% for skewed or heavy-tailed
    noise (simulated in tests/test_stats.py)."""
    if n_a < 1 or n_b < 1:
        return 1.0
    return 2 / math.comb(n_a + n_b, n_a)


@dataclass
class Verdict:
    word: str                 # REAL, NOISE or UNKNOWN
    why: str                  # one sentence a reader can check against the numbers
    a: dict                   # median_and_spread of each side
    b: dict
    change_pct: float | None  # (median B - median A) / median A, in percent
    better: bool | None       # B better than A (None unless REAL)

    def as_dict(self) -> dict:
        return asdict(self)


def compare(a, b, higher_is_better: bool, fmt=None, min_runs: int = MIN_RUNS) -> Verdict:
    """B against A. A real difference needs both: every run of one side beyond every run of the
    other (no overlap), and the medians further apart than either side's own spread. Anything
    less is within the noise of this run; fewer than `min_runs` runs on a side cannot tell.
    `fmt` writes the numbers in `why` (in the figure's unit)."""
    fmt = fmt or _num
    a, b = present(a), present(b)
    sa, sb = median_and_spread(a, None), median_and_spread(b, None)
    ma, mb = median(a), median(b)
    change = (mb - ma) / ma * 100 if ma and mb is not None else None
    if len(a) < min_runs or len(b) < min_runs:
        return Verdict(UNKNOWN, f"{min(len(a), len(b))} run(s) on a side, {min_runs} needed for a verdict", sa, sb, change, None)
    if max(a) < min(b):
        low, high = "A", "B"
    elif max(b) < min(a):
        low, high = "B", "A"
    else:
        return Verdict(NOISE, "the two sides' runs overlap", sa, sb, change, None)
    gap, wider = abs(mb - ma), max(spread(a), spread(b))
    if gap <= wider:
        return Verdict(NOISE, f"every run of {high} is above every run of {low}, but the medians are "
                       f"{fmt(gap)} apart, not more than the wider side's spread ({fmt(wider)})", sa, sb, change, None)
    return Verdict(REAL, f"every run of {high} is above every run of {low}, and the medians are {fmt(gap)} apart, "
                   f"more than either side's spread (A {fmt(spread(a))}, B {fmt(spread(b))})",
                   sa, sb, change, (high == "B") == higher_is_better)


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"
