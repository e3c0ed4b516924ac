"""`make compare` on two soaks of one stack and endpoint (a heap setting before and after, say).

Two kinds of figures:
- per-window figures (p50, p99, server CPU µs per request over all windows; RSS over the second
  half): hundreds of windows each, whose range is set by their outliers, so `make ab`'s
  range rule would call nothing real. A change is called real when the middle halves of the two
  soaks' windows do not overlap (OLD's upper quartile below NEW's lower one, or the reverse). The
  windows of one soak are not independent draws, so this is a plain description, with no
  false-positive bound like `make ab`'s;
- the soak's verdicts (leak, stall, behind, errors, a GC pause as long as a stall) and their
  figures (memory slope, worst window, longest GC pause): a flag that appears is a regression, one
  that goes away an improvement; the figures are shown old → new, not judged.
"""
from dataclasses import dataclass

from harness.accounting import stats
from harness.reports import report_md
from harness.soak.verdicts import FLAGS, second_half

MIB = 2**20
MARK = {"regression": "▼", "improvement": "▲", "noise": "≈", "unjudged": "·"}
ORDER = ["regression", "improvement", "noise", "unjudged"]


@dataclass
class Row:
    label: str
    old: str
    new: str
    change: str
    status: str  # regression, improvement, noise, unjudged
    why: str


def quartiles(values) -> tuple[float, float, float] | None:
    values = sorted(stats.present(values))
    if len(values) < 4:
        return None
    import statistics
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def _window_samples(doc: dict) -> dict:
    ws = doc["windows"]
    return {
        "p50_ms": [w.get("p50_ms") for w in ws],
        "p99_ms": [w.get("p99_ms") for w in ws],
        "cpu_us_per_request": [w["server_cpu_s"] / w["answered"] * 1e6 for w in ws
                               if w.get("answered") and w.get("server_cpu_s") is not None],
        "rss_mib": [w["rss_bytes"] / MIB for w in second_half(ws) if w.get("rss_bytes")],
    }


WINDOW_FIGURES = [  # key, label, formatter, higher is better
    ("p50_ms", "p50 per window, ms", report_md.fmt_ms, False),
    ("p99_ms", "p99 per window, ms", report_md.fmt_ms, False),
    ("cpu_us_per_request", "server CPU µs per request, per window", lambda v: f"{v:,.1f}", False),
    ("rss_mib", "RSS over the second half, MiB", lambda v: f"{v:,.1f}", False),
]


def window_row(label: str, old, new, fmt, higher: bool) -> Row:
    a, b = quartiles(old), quartiles(new)
    if a is None or b is None:
        return Row(label, "–" if a is None else fmt(a[1]), "–" if b is None else fmt(b[1]), "", "unjudged",
                   "fewer than 4 windows with this figure in a soak")
    change = f"{(b[1] - a[1]) / a[1] * 100:+.1f}%" if a[1] else ""
    cell_a, cell_b = f"{fmt(a[1])} ({fmt(a[0])}–{fmt(a[2])})", f"{fmt(b[1])} ({fmt(b[0])}–{fmt(b[2])})"
    if a[2] < b[0] or b[2] < a[0]:
        new_higher = b[0] > a[2]
        status = "improvement" if new_higher == higher else "regression"
        return Row(label, cell_a, cell_b, change, status, "the middle halves of the two soaks' windows do not overlap")
    return Row(label, cell_a, cell_b, change, "noise", "the middle halves of the two soaks' windows overlap")


def _fmt_slope(m: dict) -> str:
    if m.get("slope_mib_per_h") is None:
        return "–"
    return f"{m['slope_mib_per_h']:,.1f} ({m['low_mib_per_h']:,.1f} to {m['high_mib_per_h']:,.1f})"


def _fmt_gc(g: dict) -> str:
    if not g.get("available"):
        return "no GC log"
    return "no pause" if g.get("longest_ms") is None else f"{report_md.fmt_ms(g['longest_ms'])} ({g.get('longest_kind')})"


def verdict_rows(old: dict, new: dict) -> list[Row]:
    vo, vn = old["verdicts"], new["verdicts"]
    rows = []
    for flag in FLAGS:
        a, b = flag in vo["flags"], flag in vn["flags"]
        if a or b:
            status = "noise" if a == b else "regression" if b else "improvement"
            rows.append(Row(f"flag: {flag}", "⚑" if a else "no", "⚑" if b else "no", "", status,
                            "flagged in both" if a and b else "appeared" if b else "went away"))
    figures = [
        ("memory slope, MiB/h (95% interval)", _fmt_slope(vo["memory"]), _fmt_slope(vn["memory"])),
        ("worst window p99, ms", report_md.fmt_ms((vo["latency"]["worst_window"] or {}).get("p99_ms")),
         report_md.fmt_ms((vn["latency"]["worst_window"] or {}).get("p99_ms"))),
        ("slowest request, ms", report_md.fmt_ms(vo["latency"]["slowest_request_ms"]),
         report_md.fmt_ms(vn["latency"]["slowest_request_ms"])),
        ("stall windows", str(len(vo["latency"]["stall_windows"])), str(len(vn["latency"]["stall_windows"]))),
        ("longest GC pause, ms", _fmt_gc(vo["gc"]), _fmt_gc(vn["gc"])),
        ("GC pauses: count, total s", *(f"{g['pauses']:,}, {g['total_ms'] / 1000:,.2f}" if g.get("available") else "no GC log"
                                         for g in (vo["gc"], vn["gc"]))),
        ("answered / offered", *(f"{t['fraction']:.2%}" if t.get("fraction") is not None else "–"
                                 for t in (vo["throughput"], vn["throughput"]))),
        ("errors", f"{vo['errors']['count']:,}", f"{vn['errors']['count']:,}"),
    ]
    rows += [Row(label, a, b, "", "unjudged", "a figure of the verdicts: the flags above judge it") for label, a, b in figures]
    return rows


def compare(old: dict, new: dict) -> list[Row]:
    so, sn = _window_samples(old), _window_samples(new)
    rows = [window_row(label, so[key], sn[key], fmt, higher) for key, label, fmt, higher in WINDOW_FIGURES]
    if old.get("verdicts") and new.get("verdicts"):
        rows += verdict_rows(old, new)
    return sorted(rows, key=lambda r: ORDER.index(r.status))


def what(doc: dict) -> str:
    p = doc.get("plan") or {}
    return (f"{len(doc['windows'])} windows of {p.get('window_s', '?')} s at {p.get('rate_rps') or 0:,} req/s"
            + (f", flags: {', '.join(doc['verdicts']['flags']) or 'none'}" if doc.get("verdicts") else ""))


def differences(old: dict, new: dict) -> list[str]:
    out = []
    po, pn = old.get("plan") or {}, new.get("plan") or {}
    for key in ("rate_rps", "connections", "window_s", "duration_s"):
        if po.get(key) != pn.get(key):
            out.append(f"plan {key}: {po.get(key)!r} → {pn.get(key)!r}")
    if old.get("env_text") != new.get("env_text"):
        out.append(f"stack environment: `{old.get('env_text') or 'the defaults'}` → `{new.get('env_text') or 'the defaults'}`")
    return out


LEGEND = (f"{MARK['regression']} worse, {MARK['improvement']} better, {MARK['noise']} within the noise, {MARK['unjudged']} "
          "shown, not judged. Per-window figures: median (interquartile range) of the windows; a change is judged "
          "when the two interquartile ranges do not overlap. Flags: one that appears is a regression.")
HEADER = ["figure", "OLD", "NEW", "change", "why"]


def cells(r: Row) -> list[str]:
    return [r.label, r.old, r.new, f"{r.change} {MARK[r.status]}".strip(), r.why]
