"""`make compare OLD=results/<a> NEW=results/<b>`: every cell both runs measured, side by side.

A cell is one stack, endpoint, kind of run and level (closed loop at N connections, open loop at a
fraction of the peak, the best closed-loop level, or one side of an A/B); its figures are req/s,
CPU µs/req, p99 and peak RSS. A change counts only when it exceeds both runs' own spreads
(stats.compare, the rule `make ab` uses), which needs three runs or more of that cell in both: a
cell measured fewer times in either shows its change but is not judged. Regressions come first; what
differs between the two runs (machine, settings, commit, versions) is named before any number.
"""
import json
import pathlib
import sys
from collections import defaultdict
from dataclasses import dataclass, field

from harness.ab import files as ab_files
from harness.accounting import stats
from harness.bench import knobs
from harness.reports import report_md, results
from harness.reports.report_html import CSS
from harness.reports.svg import esc
from harness.soak import compare as soak_compare, conclusions, files as soak_files

# figure key, label, formatter, higher is better
FIGURES = [
    ("throughput_rps", "req/s", report_md.fmt_rps, True),
    ("cpu_us_per_request", "CPU µs/req", lambda v: "–" if v is None else f"{v:,.1f}", False),
    ("p99_ms", "p99 ms", report_md.fmt_ms, False),
    ("peak_rss_bytes", "peak RSS MiB", report_md.fmt_mib, False),
]
MARK = {"regression": "▼", "improvement": "▲", "noise": "≈", "unjudged": "·"}
DIFFERENT_MACHINE = ("hostname", "cpu_model", "cpus", "cpus_usable", "memory_bytes")


class CompareError(ValueError):
    pass


@dataclass
class Run:
    file: pathlib.Path   # its results.json or ab.json
    kind: str            # "bench", "ab" or "soak"
    doc: dict

    @property
    def dir(self) -> pathlib.Path:
        return self.file.parent


@dataclass
class Cell:
    label: str
    detail: str = ""  # the level, where it can differ between runs (connections of the best level, an open-loop rate)
    samples: dict = field(default_factory=lambda: defaultdict(list))  # figure -> values


def load(path) -> Run:
    path = pathlib.Path(path)
    if not path.exists():
        raise CompareError(f"{path}: no such file or directory")
    if path.is_dir():
        found = [p for p in (path / "results.json", path / "ab.json") if p.exists()]
        if not found:
            raise CompareError(f"{path}: holds neither a results.json (make bench) nor an ab.json (make ab)")
        path = found[0]
    try:
        schema = json.loads(path.read_text()).get("schema")
        if schema == ab_files.SCHEMA:
            return Run(path, "ab", ab_files.read(path))
        if schema == soak_files.SCHEMA:
            # Judged again in memory with this harness (as make report does, without rewriting the file):
            # two soaks are compared by the same rules whenever they ran.
            doc = soak_files.read(path)
            conclusions.rejudge(doc, path.parent)
            return Run(path, "soak", doc)
        return Run(path, "bench", results.read(path))
    except (ValueError, AttributeError, knobs.Usage) as e:
        raise CompareError(f"{path}: {e}") from None


def _run_figures(r: dict) -> dict:
    memory = (r.get("stats") or {}).get("memory") or {}
    return {"throughput_rps": r.get("throughput_rps") if r.get("kind") == "closed" else None,
            "cpu_us_per_request": r.get("cpu_us_per_request"),
            "p99_ms": (r.get("latency_ms") or {}).get("p99"),
            "peak_rss_bytes": memory.get("peak_rss_bytes")}


def _add(cell: Cell, figures: dict) -> None:
    for key, value in figures.items():
        if value is not None:
            cell.samples[key].append(value)


def bench_cells(doc: dict) -> dict:
    """(stack, endpoint, kind, level) -> Cell, from a results.json. "best" holds the runs at each
    run's headline level (the sweep's best and its repeats), wherever that level was."""
    cells = {}
    for s in doc["stacks"]:
        for e, ep in (s.get("endpoints") or {}).items():
            for r in ep["sweep"] + ep["repeats"]:
                c = r["connections"]
                cell = cells.setdefault((s["name"], e, "closed", c), Cell(f"{s['name']} /{e} closed loop, {c} conns"))
                _add(cell, _run_figures(r))
            h = ep["headline"]["connections"]
            best = cells.setdefault((s["name"], e, "best", None), Cell(f"{s['name']} /{e} best closed-loop level", f"{h} conns"))
            for r in ep["sweep"] + ep["repeats"]:
                if r["connections"] == h:
                    _add(best, _run_figures(r))
            for r in ep["open_loop"]:
                if r.get("skipped") or r.get("fraction_of_peak") is None:
                    continue
                cell = cells.setdefault((s["name"], e, "open", r["fraction_of_peak"]),
                                        Cell(f"{s['name']} /{e} open loop at {r['fraction_of_peak']:.0%} of the peak",
                                             f"{report_md.fmt_rps(r.get('target_rate_rps'))} req/s"))
                _add(cell, _run_figures(r))
    return cells


def ab_cells(doc: dict) -> dict:
    """(stack, endpoint, "A"/"B", connections) -> Cell, from an ab.json; open-loop p99 as its own cell."""
    cells = {}
    name, e, st = doc["stack"]["name"], doc["endpoint"], doc["settings"]
    for side in ab_files.SIDES:
        text = doc["sides"][side]["text"] or "the defaults"
        closed = cells.setdefault((name, e, side, st["connections"]),
                                  Cell(f"{name} /{e} side {side} ({text}), {st['connections']} conns"))
        for r in doc["rounds"]:
            if r["side"] == side:
                f = r["figures"]
                _add(closed, {k: f.get(k) for k in ("throughput_rps", "cpu_us_per_request", "p99_ms", "peak_rss_bytes")})
                if f.get("open_p99_ms") is not None:
                    cell = cells.setdefault((name, e, f"{side} open", st["open_rate"]),
                                            Cell(f"{name} /{e} side {side} ({text}), open loop at {st['open_rate']:,.0f} req/s"))
                    _add(cell, {"p99_ms": f["open_p99_ms"]})
    return cells


def cells_of(run: Run) -> dict:
    return ab_cells(run.doc) if run.kind == "ab" else bench_cells(run.doc)


@dataclass
class Row:
    label: str
    figures: dict   # figure key -> stats.Verdict as a dict (its side a is OLD, b is NEW)
    status: str     # regression, improvement, noise, unjudged
    weight: float   # how far the worst judged change went, for ordering


def compare_cell(label: str, old: Cell, new: Cell) -> Row:
    figures = {}
    for key, _, fmt, higher in FIGURES:
        if old.samples.get(key) and new.samples.get(key):
            figures[key] = stats.compare(old.samples[key], new.samples[key], higher_is_better=higher, fmt=fmt).as_dict()
    judged = [v for v in figures.values() if v["word"] != stats.UNKNOWN]
    worse = [abs(v["change_pct"] or 0) for v in judged if v["word"] == stats.REAL and not v["better"]]
    better = [abs(v["change_pct"] or 0) for v in judged if v["word"] == stats.REAL and v["better"]]
    if worse:
        return Row(label, figures, "regression", max(worse))
    if better:
        return Row(label, figures, "improvement", max(better))
    if judged:
        return Row(label, figures, "noise", 0.0)
    return Row(label, figures, "unjudged", max((abs(v["change_pct"] or 0) for v in figures.values()), default=0.0))


ORDER = ["regression", "improvement", "noise", "unjudged"]


def compare(old: Run, new: Run) -> dict:
    if old.kind != new.kind:
        raise CompareError(f"{old.file} is a {old.kind} run and {new.file} a {new.kind} run: compare like with like")
    if old.kind in ("ab", "soak") and (old.doc["stack"]["name"], old.doc["endpoint"]) != (new.doc["stack"]["name"], new.doc["endpoint"]):
        raise CompareError(f"the two {'A/B runs' if old.kind == 'ab' else 'soaks'} measured different things: "
                           f"{old.doc['stack']['name']} /{old.doc['endpoint']} and {new.doc['stack']['name']} /{new.doc['endpoint']}")
    if old.kind == "soak":
        return {"rows": soak_compare.compare(old.doc, new.doc), "only_old": [], "only_new": [],
                "differences": differences(old, new), "across_machines": across_machines(old.doc, new.doc)}
    a, b = cells_of(old), cells_of(new)
    rows = []
    for key in a:
        if key not in b:
            continue
        old_d, new_d = a[key].detail, b[key].detail
        if key[2] == "best" and old_d == new_d:
            continue  # the same level in both: its closed-loop cell says it all
        if old_d == new_d:
            label = f"{a[key].label} ({old_d})" if old_d else a[key].label
        else:
            label = f"{a[key].label} ({old_d} → {new_d})"
        rows.append(compare_cell(label, a[key], b[key]))
    rows.sort(key=lambda r: (ORDER.index(r.status), -r.weight))
    return {"rows": rows, "only_old": sorted(a[k].label for k in a if k not in b and k[2] != "best"),
            "only_new": sorted(b[k].label for k in b if k not in a and k[2] != "best"),
            "differences": differences(old, new), "across_machines": across_machines(old.doc, new.doc)}


def across_machines(old: dict, new: dict) -> bool:
    return any(old["machine"].get(k) != new["machine"].get(k) for k in DIFFERENT_MACHINE)


def _diff_dict(what: str, old: dict, new: dict) -> list[str]:
    return [f"{what} {k}: {old.get(k)!r} → {new.get(k)!r}" for k in sorted(set(old) | set(new), key=str)
            if old.get(k) != new.get(k)]


def differences(old: Run, new: Run) -> list[str]:
    """What else changed between the runs, besides the code under test: each could explain a number."""
    o, n = old.doc, new.doc
    out = []
    if o["git"].get("commit") != n["git"].get("commit") or o["git"].get("dirty") != n["git"].get("dirty"):
        out.append(f"commit {(o['git'].get('commit') or '?')[:12]}{' (dirty)' if o['git'].get('dirty') else ''} → "
                   f"{(n['git'].get('commit') or '?')[:12]}{' (dirty)' if n['git'].get('dirty') else ''}")
    out += _diff_dict("machine", o["machine"], n["machine"])
    unmeasured = ("save", "build")  # ab's: where it saved, whether it built first
    out += _diff_dict("settings", {k: v for k, v in o["settings"].items() if k not in unmeasured},
                      {k: v for k, v in n["settings"].items() if k not in unmeasured})
    out += _diff_dict("CPU layout", o.get("cpu_layout") or {}, n.get("cpu_layout") or {})
    out += _diff_dict("limits", o.get("limits") or {}, n.get("limits") or {})
    out += _diff_dict("tool", o.get("tools") or {}, n.get("tools") or {})
    if old.kind == "soak":
        out += soak_compare.differences(o, n)
        out += _diff_dict(f"{o['stack']['name']} version of", o.get("versions") or {}, n.get("versions") or {})
    elif old.kind == "bench":
        out += _diff_dict("services", o.get("services") or {}, n.get("services") or {})
        ov = {s["name"]: s.get("versions") or {} for s in o["stacks"]}
        nv = {s["name"]: s.get("versions") or {} for s in n["stacks"]}
        for name in sorted(set(ov) & set(nv)):
            out += _diff_dict(f"{name} version of", ov[name], nv[name])
    else:
        out += _diff_dict(f"{o['stack']['name']} version of", o.get("versions") or {}, n.get("versions") or {})
        for side in ab_files.SIDES:
            if o["sides"][side]["env"] != n["sides"][side]["env"]:
                out.append(f"side {side}: `{o['sides'][side]['text']}` → `{n['sides'][side]['text']}`")
    return out


def _flagged(run: Run) -> str:
    if run.kind == "soak":
        return soak_compare.what(run.doc)
    if run.kind == "ab":
        rs = run.doc["rounds"]
        return f"{sum(1 for r in rs if r['flags'])} of {len(rs)} rounds flagged"
    rs = [r for s in run.doc["stacks"] for ep in (s.get("endpoints") or {}).values()
          for r in ep["sweep"] + ep["repeats"] + ep["open_loop"] if "stats" in r]
    return f"{sum(1 for r in rs if r.get('flags'))} of {len(rs)} runs flagged"


def figure_cell(v: dict | None, fmt) -> tuple[str, str]:
    """(text, status) of one figure of a row."""
    if v is None:
        return "–", ""
    status = ("unjudged" if v["word"] == stats.UNKNOWN else "noise" if v["word"] == stats.NOISE
              else "improvement" if v["better"] else "regression")
    change = "" if v["change_pct"] is None else f" {v['change_pct']:+.1f}%"
    return f"{fmt(v['a']['median'])} → {fmt(v['b']['median'])}{change} {MARK[status]}", status


def header_lines(old: Run, new: Run, result: dict) -> list[str]:
    out = [f"OLD: {old.file} ({old.doc['started']}, {_flagged(old)})", f"NEW: {new.file} ({new.doc['started']}, {_flagged(new)})"]
    if result["across_machines"]:
        out.append("ACROSS MACHINES: the runs come from different machines, so every change below mixes the "
                   "machines' difference with the code's")
    quick = [side for side, r in (("OLD", old), ("NEW", new)) if (r.doc.get("settings") or {}).get("quick")]
    if quick:
        out.append(f"QUICK PASS ({' and '.join(quick)}): {report_md.QUICK_MARK}; a QUICK pass measures the warm-up "
                   "more than the stack, so no change below says anything about the code")
    out += result["differences"] or ["nothing differs between the runs but the time they ran (same commit, machine, settings)"]
    return out


LEGEND = (f"{MARK['regression']} worse beyond both runs' spreads, {MARK['improvement']} better beyond them, "
          f"{MARK['noise']} within the noise, {MARK['unjudged']} not judged (fewer than {stats.MIN_RUNS} runs in either)")
SECTIONS = {"regression": "Regressions", "improvement": "Improvements", "noise": "Within the noise",
            "unjudged": f"Not judged (fewer than {stats.MIN_RUNS} runs in either)"}


def render_md(old: Run, new: Run, result: dict) -> str:
    if old.kind == "soak":
        return "\n".join(["# Compare two soaks", ""] + [f"- {line}" for line in header_lines(old, new, result)]
                         + ["", soak_compare.LEGEND, "", report_md.table(soak_compare.HEADER,
                                                                         [soak_compare.cells(r) for r in result["rows"]]), ""])
    out = ["# Compare", ""] + [f"- {line}" for line in header_lines(old, new, result)] + ["", LEGEND, ""]
    header = ["cell"] + [label for _, label, _, _ in FIGURES]
    for status in ORDER:
        rows = [r for r in result["rows"] if r.status == status]
        if not rows:
            continue
        out += [f"## {SECTIONS[status]} ({len(rows)})", "",
                report_md.table(header, [[r.label] + [figure_cell(r.figures.get(k), fmt)[0] for k, _, fmt, _ in FIGURES]
                                         for r in rows]), ""]
    for what, labels in (("only in OLD", result["only_old"]), ("only in NEW", result["only_new"])):
        if labels:
            out += [f"Measured {what}: " + "; ".join(labels), ""]
    return "\n".join(out)


EXTRA_CSS = ".regression{color:#b00;font-weight:bold}.improvement{color:#070;font-weight:bold}.unjudged{color:#777}"


def render_html(old: Run, new: Run, result: dict) -> str:
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Compare {esc(old.doc['started'])} → "
             f"{esc(new.doc['started'])}</title><style>{CSS}{EXTRA_CSS}</style></head><body>",
             "<h1>Compare</h1>",
             "<ul>" + "".join(f"<li>{esc(line)}</li>" for line in header_lines(old, new, result)) + "</ul>"]
    if old.kind == "soak":
        parts += [f"<p class='note'>{esc(soak_compare.LEGEND)}</p><table><tr>"
                  + "".join(f"<th>{esc(h)}</th>" for h in soak_compare.HEADER) + "</tr>"]
        parts += [f"<tr class='{r.status}'>" + "".join(f"<td>{esc(c)}</td>" for c in soak_compare.cells(r)) + "</tr>"
                  for r in result["rows"]]
        parts.append("</table></body></html>")
        return "\n".join(parts)
    parts += [f"<p class='note'>{esc(LEGEND)}. A change is judged only where both runs repeated the cell: every run of "
             "one beyond every run of the other, and the medians further apart than either run's spread.</p>"]
    for status in ORDER:
        rows = [r for r in result["rows"] if r.status == status]
        if not rows:
            continue
        parts.append(f"<h2>{esc(SECTIONS[status])} ({len(rows)})</h2><table><tr><th>cell</th>"
                     + "".join(f"<th>{esc(label)}</th>" for _, label, _, _ in FIGURES) + "</tr>")
        for r in rows:
            cells = [figure_cell(r.figures.get(k), fmt) for k, _, fmt, _ in FIGURES]
            parts.append(f"<tr><td>{esc(r.label)}</td>"
                         + "".join(f"<td class='{s}'>{esc(t)}</td>" for t, s in cells) + "</tr>")
        parts.append("</table>")
    for what, labels in (("only in OLD", result["only_old"]), ("only in NEW", result["only_new"])):
        if labels:
            parts.append(f"<p class='note'>Measured {what}: {esc('; '.join(labels))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def main(old_path: str, new_path: str, out: str = "") -> int:
    """`make compare`: markdown on the terminal, compare.html next to NEW (or at `out`)."""
    if not old_path or not new_path:
        print("usage: make compare OLD=results/<a> NEW=results/<b> [OUT=<file.html>]", file=sys.stderr)
        return 2
    try:
        old, new = load(old_path), load(new_path)
        result = compare(old, new)
    except CompareError as e:
        print(f"compare: {e}", file=sys.stderr)
        return 2
    print(render_md(old, new, result))
    target = pathlib.Path(out) if out else new.dir / "compare.html"
    target.write_text(render_html(old, new, result))
    print(f"compare: {target}")
    return 0
