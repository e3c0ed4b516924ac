"""The verdicts of a soak, from its window series alone: does memory keep growing (leak), did the
server stop answering for a while (stall), did it keep up with the offered rate (behind), did it
answer errors, and how long was its longest GC pause. Pure functions of the recorded numbers, so
the same results.json always gets the same verdicts and the detectors are tested on synthetic series.

Each threshold is a Thresholds field, recorded in results.json next to the verdict it decided.
"""
import math
from dataclasses import asdict, dataclass

from harness.accounting import stats

MIB = 2**20
MAX_FIT_POINTS = 400  # Theil-Sen compares every pair: longer series are first reduced to medians of consecutive runs
Z95 = 1.959964


@dataclass
class Thresholds:
    leak_mib_per_h: float = 20.0  # RSS growth over the second half above this ...
    leak_min_mib: float = 4.0     # ... adding up to more than this over the fitted span (below: allocator noise)
    stall_factor: float = 10.0    # a window's p99 or max above this multiple of the soak's usual p99 (baseline_p99) ...
    stall_floor_ms: float = 200.0  # ... and above this (a fast server's 10x is still no stall)
    behind_fraction: float = 0.9  # a window (or the soak) answering less than this share of the offered requests
    release_fraction: float = 0.2  # RSS falling by more than this share (and leak_min_mib) from one window to the next: a release

    def as_dict(self) -> dict:
        return asdict(self)


def theil_sen(points) -> dict | None:
    """Slope of y against x as the median of every pairwise slope (Theil 1950, Sen 1968): a GC's
    sawtooth or one odd sample does not tilt it, as it would a least-squares line. `low`, `high`: Sen's
    95% confidence interval for the slope (the ranks of the pairwise slopes that bracket it; it
    assumes independent samples, which consecutive RSS readings are not quite: the thresholds
    beside it carry the rest). None with fewer than 3 points or no spread in x."""
    points = sorted((x, y) for x, y in points if x is not None and y is not None)
    if len(points) > MAX_FIT_POINTS:
        points = _reduce(points, MAX_FIT_POINTS)
    n = len(points)
    slopes = sorted((y2 - y1) / (x2 - x1) for i, (x1, y1) in enumerate(points) for x2, y2 in points[i + 1:] if x2 != x1)
    if n < 3 or not slopes:
        return None
    slope = stats.median(slopes)
    c = Z95 * math.sqrt(n * (n - 1) * (2 * n + 5) / 18)
    big = len(slopes)
    low = slopes[max(0, min(big - 1, int(round((big - c) / 2))))]
    high = slopes[max(0, min(big - 1, int(round((big + c) / 2)) - 1))]
    ys = [y for _, y in points]
    intercept = stats.median([y - slope * x for x, y in points])
    return {"slope": slope, "low": min(low, slope), "high": max(high, slope), "intercept": intercept, "n": n,
            "x_from": points[0][0], "x_to": points[-1][0], "y_min": min(ys), "y_max": max(ys)}


def _reduce(points, limit: int):
    """Consecutive groups of points -> (median x, median y) each, at most `limit` of them."""
    size = math.ceil(len(points) / limit)
    groups = [points[i:i + size] for i in range(0, len(points), size)]
    return [(stats.median([x for x, _ in g]), stats.median([y for _, y in g])) for g in groups]


def second_half(windows: list) -> list:
    if not windows:
        return []
    end = windows[-1]["t_s"] + windows[-1]["seconds"]
    return [w for w in windows if w["t_s"] >= end / 2]


TAIL_FRACTION = 0.25  # the last quarter: is memory still growing at the end?


def memory(windows: list, th: Thresholds) -> dict:
    """RSS of the server's tree over the second half: Theil-Sen slope in MiB per hour with its 95%
    interval. A leak: slope above leak_mib_per_h, the interval's low end above zero (growth beyond
    the fit's own spread), more than leak_min_mib of growth over the fitted span, and still growing
    over the last quarter (its own slope above leak_mib_per_h, its interval above zero). Growth
    that stopped before the end is growth to a bound, not a leak: a JVM heap filling up to -Xmx
    (java-tomcat's RSS rose 195 -> 625 MiB over 23 minutes of a 30-minute soak, then stayed at
    625-626 MiB), which the second half's fit alone called a leak of 898 MiB/h."""
    half = [w for w in second_half(windows) if w.get("rss_bytes")]
    fit = theil_sen([(w["t_s"] + w["seconds"], w["rss_bytes"] / MIB) for w in half])
    out = {"fitted": "rss_bytes of the windows in the second half, MiB against hours",
           "windows": len(half), "slope_mib_per_h": None, "low_mib_per_h": None, "high_mib_per_h": None,
           "growth_mib": None, "from_s": None, "to_s": None, "intercept_mib": None,
           "tail_slope_mib_per_h": None, "tail_low_mib_per_h": None, "tail_high_mib_per_h": None, "tail_from_s": None,
           "levelled_off": None, "sawtooth": None,
           "threshold_mib_per_h": th.leak_mib_per_h, "threshold_growth_mib": th.leak_min_mib, "leak": None}
    if fit is None:
        out["why"] = "fewer than 3 memory samples in the second half: no slope"
        return out
    per_h = 3600.0
    span_h = (fit["x_to"] - fit["x_from"]) / per_h
    slope, low, high = fit["slope"] * per_h, fit["low"] * per_h, fit["high"] * per_h
    growth = slope * span_h
    out.update(slope_mib_per_h=round(slope, 2), low_mib_per_h=round(low, 2), high_mib_per_h=round(high, 2),
               growth_mib=round(growth, 2), from_s=fit["x_from"], to_s=fit["x_to"], intercept_mib=fit["intercept"])
    grew = slope > th.leak_mib_per_h and low > 0 and growth > th.leak_min_mib
    end = windows[-1]["t_s"] + windows[-1]["seconds"]
    tail = [w for w in half if w["t_s"] >= end * (1 - TAIL_FRACTION)]
    tail_fit = theil_sen([(w["t_s"] + w["seconds"], w["rss_bytes"] / MIB) for w in tail])
    still = True  # too few windows in the last quarter to tell: the second half decides
    if tail_fit is not None:
        t_slope, t_low, t_high = tail_fit["slope"] * per_h, tail_fit["low"] * per_h, tail_fit["high"] * per_h
        out.update(tail_slope_mib_per_h=round(t_slope, 2), tail_low_mib_per_h=round(t_low, 2),
                   tail_high_mib_per_h=round(t_high, 2), tail_from_s=tail_fit["x_from"])
        still = t_slope > th.leak_mib_per_h and t_low > 0
    out["levelled_off"] = grew and not still
    out["sawtooth"] = saw = sawtooth(windows, th) if grew and still else None
    bounded = bool(saw and saw["bounded"])
    out["leak"] = grew and still and not bounded
    tail_text = ("" if tail_fit is None else
                 f"; over the last quarter {out['tail_slope_mib_per_h']:,.1f} MiB/h (95% interval "
                 f"{out['tail_low_mib_per_h']:,.1f} to {out['tail_high_mib_per_h']:,.1f})")
    out["why"] = (f"RSS grew {slope:,.1f} MiB/h (95% interval {low:,.1f} to {high:,.1f}) over the second half, "
                  f"{growth:+,.1f} MiB in {span_h * 60:,.1f} min" + tail_text
                  + (f": a leak (above {th.leak_mib_per_h:g} MiB/h, the interval above zero, more than "
                     f"{th.leak_min_mib:g} MiB, and still growing over the last quarter)"
                     + ("" if saw is None else f"; {saw['why']}") if out["leak"] else
                     f": the rising edge of a sawtooth, not a leak: {saw['why']}" if bounded else
                     f": it levelled off at {fit['y_max']:,.0f} MiB before the end, growth to a bound (a heap reaching "
                     f"its maximum size, a pool or cache filling), not a leak" if out["levelled_off"] else
                     f": no leak (a leak needs above {th.leak_mib_per_h:g} MiB/h, the interval above zero and more "
                     f"than {th.leak_min_mib:g} MiB, still growing over the last quarter)"))
    return out


def sawtooth(windows: list, th: Thresholds) -> dict | None:
    """Memory that grows and is released again, over the whole soak: a release is a fall of more than
    release_fraction of the RSS (and more than leak_min_mib) from one window to the next, and the
    floor after it is the lowest RSS until the next release. Native buffers freed only when the Java
    objects owning them are collected grow between two full collections and fall at each
    (java-voovan's /redis soak, 2026-11-26: 210 -> 584 MiB, 232 after a full collection, up to 530,
    230 after the next); the second half's fit sees only a rising edge. Bounded:
    at least two releases, the floors not rising by more than leak_mib_per_h (and leak_min_mib in
    all), and no RSS after the last release above the highest peak before it. None: no release."""
    rss = [(w["t_s"] + w["seconds"], w["rss_bytes"] / MIB) for w in windows if w.get("rss_bytes")]
    releases = [k for k in range(1, len(rss)) if rss[k - 1][1] - rss[k][1] > max(th.release_fraction * rss[k - 1][1],
                                                                                 th.leak_min_mib)]
    if not releases:
        return None
    floors = []
    for n, k in enumerate(releases):
        cycle = rss[k:releases[n + 1]] if n + 1 < len(releases) else rss[k:]
        floors.append(min(cycle, key=lambda p: p[1]))
    peak_before = max(y for _, y in rss[:releases[-1]])
    after = max(y for _, y in rss[releases[-1]:])
    out = {"releases_at_s": [rss[k][0] for k in releases], "floors_mib": [round(y, 1) for _, y in floors],
           "peak_mib": round(max(y for _, y in rss), 1), "floor_slope_mib_per_h": None, "bounded": False}
    fit = theil_sen(floors)
    if fit is not None:
        out["floor_slope_mib_per_h"] = round(fit["slope"] * 3600, 2)
    elif len(floors) == 2 and floors[1][0] != floors[0][0]:
        out["floor_slope_mib_per_h"] = round((floors[1][1] - floors[0][1]) / (floors[1][0] - floors[0][0]) * 3600, 2)
    rising = floors[-1][1] - floors[0][1]
    out["bounded"] = (len(releases) >= 2 and after <= peak_before
                      and (out["floor_slope_mib_per_h"] <= th.leak_mib_per_h or rising <= th.leak_min_mib))
    floors_text = ", ".join(f"{y:,.0f}" for _, y in floors)
    at_text = ", ".join(f"{t:,.0f}" for t in out["releases_at_s"])
    out["why"] = (f"released {len(releases)} time(s) (at {at_text} s), the floors after them {floors_text} MiB"
                  + ("" if out["floor_slope_mib_per_h"] is None else f" ({out['floor_slope_mib_per_h']:+,.1f} MiB/h)")
                  + f", peak {out['peak_mib']:,.0f} MiB"
                  + ("" if out["bounded"] else
                     ": one release cannot show a bound" if len(releases) < 2 else
                     f": RSS after the last release ({after:,.0f} MiB) above the peak before it ({peak_before:,.0f})"
                     if after > peak_before else ": the floors rise"))
    return out


BASELINE_QUANTILE = 0.1


def baseline_p99(p99s) -> float | None:
    """The soak's usual p99: the 10th percentile of its windows' p99 (the lowest with fewer than 10).
    Not the median: a server stalling in half its windows or more (a heap full from minute 17 on)
    lifts its median p99 to the stalls' level, and the stalls would no longer stand out."""
    p99s = sorted(stats.present(p99s))
    return p99s[int(BASELINE_QUANTILE * (len(p99s) - 1))] if p99s else None


def stall_threshold(p99s, th: Thresholds) -> float:
    return max(th.stall_factor * (baseline_p99(p99s) or 0), th.stall_floor_ms)


def latency(windows: list, th: Thresholds) -> dict:
    """Stall windows: no answers at all, or p99 or max above max(stall_factor x the soak's usual
    p99 (baseline_p99), stall_floor_ms). The worst window is the one with the highest p99 (a window
    without answers is worse than any)."""
    p99s = [w["p99_ms"] for w in windows if w.get("p99_ms") is not None]
    median_p99, baseline = stats.median(p99s), baseline_p99(p99s)
    threshold = stall_threshold(p99s, th)
    stalls = [w["i"] for w in windows if is_stall(w, threshold)]
    near = disturbed_near(windows)
    disturbed = [i for i in stalls if i in near]
    own = [i for i in stalls if i not in near]
    worst = worst_of(windows)
    worst_calm = worst_of([w for w in windows if w["i"] not in near])
    longest = max((w for w in windows if w.get("max_ms") is not None), key=lambda w: w["max_ms"], default=None)
    out = {"median_p50_ms": stats.median([w.get("p50_ms") for w in windows]), "median_p99_ms": median_p99,
           "baseline_p99_ms": baseline, "threshold_ms": round(threshold, 3), "stall_windows": stalls, "stall": bool(own),
           "disturbed_stall_windows": disturbed, "disturbed_stall": bool(disturbed) and not own,
           "worst_window": brief(worst),
           # the worst of the windows neither disturbed nor next to one: the server's own worst, when others took the box
           "worst_undisturbed_window": None if worst_calm is worst else brief(worst_calm),
           "slowest_request_ms": None if longest is None else longest["max_ms"],
           "slowest_request_window": None if longest is None else longest["i"]}
    if worst is None:
        out["why"] = "no window measured"
    else:
        w = worst
        out["why"] = ((f"{len(stalls)} stall window(s) of {len(windows)}" if stalls else f"no stall in {len(windows)} windows")
                      + (f", {len(disturbed)} of them disturbed (other processes took more than their share of the "
                         f"machine in that window or next to it)" if disturbed else "")
                      + f" (threshold {threshold:,.1f} ms = max({th.stall_factor:g} x the usual p99 "
                      f"{baseline or 0:,.2f} ms, {th.stall_floor_ms:g} ms)); worst window at {w['t_s']:,.0f} s: "
                      + latency_figures(w)
                      + ("" if out["worst_undisturbed_window"] is None else
                         f"; away from disturbed windows at {worst_calm['t_s']:,.0f} s: " + latency_figures(worst_calm)))
    return out


def worst_of(windows: list) -> dict | None:
    """The window with the highest p99 (one without answers is worse than any); None for none."""
    return max(windows, key=lambda w: math.inf if w.get("p99_ms") is None else w["p99_ms"], default=None)


def brief(w: dict | None) -> dict | None:
    return None if w is None else {k: w.get(k) for k in ("i", "t_s", "p50_ms", "p99_ms", "max_ms")}


def latency_figures(w: dict) -> str:
    return "no answers" if w.get("p99_ms") is None else f"p99 {w['p99_ms']:,.1f} ms, max {w.get('max_ms') or 0:,.1f} ms"


def disturbed_near(windows: list) -> set:
    """Indices of the windows that are disturbed (other processes over foreign_max of the machine) or
    next to one. Next to one too: a stall that starts late in a window shows in its p99, while the
    CPU taken from the server or the generator is mostly counted in the next window, and -w keeps a
    window's oha waiting for requests the next window's disturbance holds."""
    out = set()
    for k, w in enumerate(windows):
        if w.get("disturbed"):
            out.update(x["i"] for x in windows[max(0, k - 1):k + 2])
    return out


def is_stall(w: dict, threshold_ms: float) -> bool:
    if not w.get("offered"):
        return False
    if not w.get("answered"):
        return True
    return any((w.get(k) or 0) > threshold_ms for k in ("p99_ms", "max_ms"))


def throughput(windows: list, th: Thresholds) -> dict:
    offered = sum(w.get("offered") or 0 for w in windows)
    answered = sum(w.get("answered") or 0 for w in windows)
    fraction = answered / offered if offered else None
    behind = [w["i"] for w in windows if w.get("offered") and (w.get("answered") or 0) < th.behind_fraction * w["offered"]]
    flagged = bool(behind) or (fraction is not None and fraction < th.behind_fraction)
    return {"offered": offered, "answered": answered, "fraction": None if fraction is None else round(fraction, 4),
            "behind_windows": behind, "behind": flagged, "threshold_fraction": th.behind_fraction,
            "why": (f"answered {answered:,} of {offered:,} offered ({(fraction or 0):.1%})"
                    + (f"; {len(behind)} window(s) under {th.behind_fraction:.0%}" if behind else
                       f"; every window at {th.behind_fraction:.0%} or more"))}


def errors(windows: list) -> dict:
    kinds: dict[str, int] = {}
    for w in windows:
        for k, v in (w.get("errors") or {}).items():
            kinds[k] = kinds.get(k, 0) + v
    total = sum(kinds.values())
    return {"count": total, "by_kind": {k: v for k, v in kinds.items() if v}, "flagged": total > 0,
            "windows": [w["i"] for w in windows if sum((w.get("errors") or {}).values())],
            "why": "no errors" if not total else
            f"{total:,} errors (" + ", ".join(f"{k} {v:,}" for k, v in kinds.items() if v) + ")"}


def gc(pauses: list, available: bool, why_not: str | None, soak_s: float, threshold_ms: float) -> dict:
    """`pauses`: [t_s, ms, kind, pid] lists (t_s None: not placed in time). A pause as long as the
    stall threshold is flagged on its own: it stops the server even if no window shows it (a
    pause between two requests' sends)."""
    if not available:
        return {"available": False, "why": why_not, "pauses": None, "longest_ms": None, "flagged": False}
    longest = max(pauses, key=lambda p: p[1], default=None)
    total = sum(p[1] for p in pauses)
    out = {"available": True, "pauses": len(pauses), "total_ms": round(total, 3),
           "share_of_time": round(total / 1000 / soak_s, 5) if soak_s else None,
           "longest_ms": None if longest is None else longest[1],
           "longest_at_s": None if longest is None else longest[0],
           "longest_kind": None if longest is None else longest[2],
           "unplaced": sum(1 for p in pauses if p[0] is None), "threshold_ms": round(threshold_ms, 3)}
    out["flagged"] = bool(longest and longest[1] > threshold_ms)
    out["why"] = ("no GC pause logged" if longest is None else
                  f"{len(pauses):,} pauses, {total / 1000:,.2f} s in all; longest {longest[1]:,.1f} ms ({longest[2]})"
                  + ("" if longest[0] is None else f" at {longest[0]:,.0f} s")
                  + (f": as long as a stall (over {threshold_ms:,.1f} ms)" if out["flagged"] else ""))
    return out


FLAGS = {"leak": "memory kept growing over the second half",
         "stall": "the server stopped answering for a while (a window's p99 or max far above the soak's usual p99)",
         "disturbed-stall": "stalls only in or next to windows where other processes took more than their share of the "
                            "machine: not attributable to the server; soak it again on a quiet machine",
         "behind": "the server answered less than the offered rate",
         "errors": "some requests failed (non-2xx, socket errors, timeouts)",
         "gc-stall": "a GC pause as long as a stall",
         "exited": "the stack exited during the soak"}


def lead_in_verdict(w: dict | None, source: str | None, threshold_ms: float, th: Thresholds) -> dict:
    """The lead-in (soak.py: one window of the soak's own load before the first judged one), shown
    with what the stall and behind rules would have said of it, but not judged: it holds the start of
    the load (the generator's first connections, the server's first requests from this client)."""
    if w is None:
        return {"window": None, "source": None, "over_threshold": None, "behind": None,
                "why": "no lead-in recorded"}
    stalled = is_stall(w, threshold_ms)
    behind = bool(w.get("offered")) and (w.get("answered") or 0) < th.behind_fraction * w["offered"]
    figures = ("no answers" if not w.get("answered") else
               f"p99 {w.get('p99_ms') or 0:,.1f} ms, max {w.get('max_ms') or 0:,.1f} ms, answered "
               f"{w['answered']:,} of {w['offered']:,}")
    return {"window": {k: w.get(k) for k in ("i", "t_s", "seconds", "offered", "answered", "p50_ms", "p99_ms", "max_ms")},
            "source": source, "over_threshold": stalled, "behind": behind,
            "why": f"{source}: {figures}"
                   + (f"; over the stall threshold ({threshold_ms:,.1f} ms)" if stalled else "")
                   + (f"; under {th.behind_fraction:.0%} answered" if behind else "")
                   + "; not judged (the start of the load)"}


def judge(windows: list, pauses: list, gc_available: bool, gc_why_not: str | None, th: Thresholds,
          exited: str | None = None, lead_in: dict | None = None, first_is_lead_in: bool = False) -> dict:
    """The verdicts. `lead_in`: the soak's lead-in window, shown, not judged. `first_is_lead_in`: a
    soak recorded before lead-ins existed: its first window held the start of the load, so it plays
    the lead-in's part (left out of the stall, behind and GC verdicts, shown as the lead-in); its
    errors still count, as the lead-in's do."""
    source = "the lead-in window"
    if first_is_lead_in and windows:
        lead_in, windows = windows[0], windows[1:]
        source = "the first window, the lead-in of a soak recorded without one"
        start = lead_in["t_s"] + lead_in["seconds"]
        pauses = [p for p in pauses if p[0] is None or p[0] >= start]
    soak_s = sum(w["seconds"] for w in windows)
    lat = latency(windows, th)
    out = {"thresholds": th.as_dict(), "windows": len(windows), "seconds": soak_s,
           "memory": memory(windows, th), "latency": lat, "throughput": throughput(windows, th),
           "errors": errors(windows + ([lead_in] if lead_in else [])),
           "gc": gc(pauses, gc_available, gc_why_not, soak_s, lat["threshold_ms"]),
           "lead_in": lead_in_verdict(lead_in, source if lead_in else None, lat["threshold_ms"], th),
           "exited": exited}
    flags = []
    if out["memory"]["leak"]:
        flags.append("leak")
    if lat["stall"]:
        flags.append("stall")
    if lat["disturbed_stall"]:
        flags.append("disturbed-stall")
    if out["throughput"]["behind"]:
        flags.append("behind")
    if out["errors"]["flagged"]:
        flags.append("errors")
    if out["gc"]["flagged"]:
        flags.append("gc-stall")
    if exited:
        flags.append("exited")
    out["flags"] = flags
    return out


def window_flags(w: dict, threshold_ms: float, th: Thresholds) -> list[str]:
    """The flags of one window, against the soak's (or, while it runs, the soak-so-far's) threshold."""
    out = []
    if is_stall(w, threshold_ms):
        out.append("stall")
    if w.get("offered") and (w.get("answered") or 0) < th.behind_fraction * w["offered"]:
        out.append("behind")
    if sum((w.get("errors") or {}).values()):
        out.append("errors")
    return out
