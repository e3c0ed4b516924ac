"""An A/B's figures per side, its verdicts, and its report.md."""
from harness.ab.files import SIDES
from harness.accounting import stats
from harness.reports import report_md

# key in a round's figures, label, unit formatter, whether higher is better
FIGURES = [
    ("throughput_rps", "req/s", report_md.fmt_rps, True),
    ("cpu_us_per_request", "CPU µs/req", lambda v: "–" if v is None else f"{v:,.1f}", False),
    ("p99_ms", "closed p99 ms", report_md.fmt_ms, False),
    ("open_p99_ms", "open p99 ms", report_md.fmt_ms, False),
    ("peak_rss_bytes", "peak RSS MiB", report_md.fmt_mib, False),
]


def figures(closed: dict, opened: dict | None) -> dict:
    """One round's numbers, from the benchmark's run records (RESULTS.md, "A run")."""
    runs = [r for r in (closed, opened) if r]
    rss = [((r.get("stats") or {}).get("memory") or {}).get("peak_rss_bytes") for r in runs]
    return {
        "throughput_rps": closed.get("throughput_rps"),
        "cpu_us_per_request": closed.get("cpu_us_per_request"),
        "p99_ms": (closed.get("latency_ms") or {}).get("p99"),
        "open_p99_ms": ((opened or {}).get("latency_ms") or {}).get("p99") if opened else None,
        "open_achieved_fraction": (opened or {}).get("achieved_fraction"),
        "peak_rss_bytes": max(stats.present(rss), default=None),
        "errors": sum(sum((r.get("errors") or {}).values()) for r in runs),
        "steal_s": round(sum((r.get("stats") or {}).get("steal_s") or 0 for r in runs), 3),
        "foreign_cpu_share": max(stats.present((r.get("stats") or {}).get("foreign_cpu_share") for r in runs), default=None),
    }


def summarize(doc: dict) -> dict:
    """Per figure: each side's median and spread, B against A, the verdict; and the caveats that
    apply to the whole run (disturbed rounds, a saturated generator, errors)."""
    rounds = doc["rounds"]
    out = {"figures": {}, "caveats": []}
    for key, label, fmt, higher in FIGURES:
        if key == "open_p99_ms" and not doc["settings"]["open_rate"]:
            continue
        samples = {side: [r["figures"].get(key) for r in rounds if r["side"] == side] for side in SIDES}
        verdict = stats.compare(samples["A"], samples["B"], higher_is_better=higher, fmt=fmt)
        out["figures"][key] = {"label": label, "higher_is_better": higher, "samples": samples, **verdict.as_dict()}
    n = [sum(1 for r in rounds if r["side"] == side) for side in SIDES]
    out["false_positive_bound"] = round(stats.false_positive_bound(*n), 4) if all(n) else None
    disturbed = [f"{r['side']}{r['round']}" for r in rounds if "disturbed" in r["flags"]]
    if disturbed:
        out["caveats"].append(f"disturbed rounds (foreign CPU over {doc['settings']['foreign_max']:.0%} of the machine, "
                              f"steal included): {', '.join(disturbed)}; confirm on a quieter machine")
    saturated = [f"{r['side']}{r['round']}" for r in rounds if "generator-saturated" in r["flags"]]
    if saturated:
        out["caveats"].append(f"the load generator was saturated in {', '.join(saturated)}: req/s there is the "
                              "client's limit, not the server's")
    behind = [f"{r['side']}{r['round']}" for r in rounds if "behind-rate" in r["flags"]]
    if behind:
        out["caveats"].append(f"open loop fell behind the offered rate in {', '.join(behind)}: its p99 describes an overloaded server")
    errors = {f"{r['side']}{r['round']}": r["figures"]["errors"] for r in rounds if r["figures"].get("errors")}
    if errors:
        out["caveats"].append("rounds with errors (non-2xx, socket errors, timeouts): "
                              + ", ".join(f"{k} {v:,}" for k, v in errors.items()))
    return out


def _side_cell(s: dict, fmt) -> str:
    if not s["n"]:
        return "–"
    return fmt(s["median"]) + (f" ({fmt(s['min'])}–{fmt(s['max'])})" if s["n"] > 1 else "")


def _verdict_cell(v: dict) -> str:
    if v["word"] == stats.REAL:
        return f"**{stats.REAL}**: B {'better' if v['better'] else 'worse'}"
    return v["word"]


def render_md(doc: dict) -> str:
    """The summary printed on the terminal; it ends with the command that repeats the run."""
    st, m, lay = doc["settings"], doc["machine"], doc["cpu_layout"]
    out = [f"## A/B: {doc['stack']['name']} /{doc['endpoint']}, {st['rounds']} rounds a side (A B A B ...), "
           f"{st['connections']} connections, {st['duration']:g} s each"
           + (f", open loop at {st['open_rate']:,.0f} req/s" if st["open_rate"] else ""), ""]
    for side in SIDES:
        out.append(f"- {side}: `{doc['sides'][side]['text']}`" if doc["sides"][side]["text"] else f"- {side}: the defaults")
    if doc["sides"]["A"]["env"] == doc["sides"]["B"]["env"]:
        out.append("- A and B are the same: this run measures the noise alone")
    out += [f"- {doc['started']}, commit `{(doc['git']['commit'] or '?')[:12]}`{' (uncommitted changes)' if doc['git']['dirty'] else ''}, "
            f"{m['cpu_model']} ({m['cpus']} CPUs), server on CPU {lay['server']}, load generator on {lay['loadgen']}"]
    summary = doc.get("summary")
    if doc.get("refused"):
        out += ["", f"**Refused**: {doc['refused']}"]
    if summary:
        fmts = {key: fmt for key, _, fmt, _ in FIGURES}
        rows = []
        for key, v in summary["figures"].items():
            change = "–" if v["change_pct"] is None else f"{v['change_pct']:+.1f}%"
            rows.append([v["label"], _side_cell(v["a"], fmts[key]), _side_cell(v["b"], fmts[key]), change,
                         _verdict_cell(v)])
        bound = summary["false_positive_bound"]
        out += ["", "Median of each side's rounds (lowest–highest):", "",
                report_md.table(["figure", "A", "B", "B vs A", "verdict"], rows), ""]
        out += [f"- {v['label']}: {v['why']}" for v in summary["figures"].values() if v["word"] != stats.UNKNOWN]
        if bound is not None and min(sum(r["side"] == s for r in doc["rounds"]) for s in SIDES) < stats.MIN_RUNS:
            out.append(f"- no verdict with fewer than {stats.MIN_RUNS} rounds a side: identical sides would look "
                       f"different up to {bound:.0%} of the time")
        elif bound is not None:
            out.append(f"- \"real\" needs every run of one side beyond every run of the other and the medians further "
                       f"apart than either side's spread: identical sides get it for a figure at most {bound:.1%} of "
                       f"the time at this many rounds (more ROUNDS, less)")
        out += [f"- ⚑ {c}" for c in summary["caveats"]]
        out += ["", "Rounds, in the order they ran:", "", report_md.table(
            ["round", "req/s", "CPU µs/req", "closed p99 ms"] + (["open p99 ms"] if st["open_rate"] else [])
            + ["peak RSS MiB", "errors", "steal s", "foreign", "flags"],
            [[f"{r['side']}{r['round']}", report_md.fmt_rps(r["figures"]["throughput_rps"]),
              fmts["cpu_us_per_request"](r["figures"]["cpu_us_per_request"]), report_md.fmt_ms(r["figures"]["p99_ms"])]
             + ([report_md.fmt_ms(r["figures"]["open_p99_ms"])] if st["open_rate"] else [])
             + [report_md.fmt_mib(r["figures"]["peak_rss_bytes"]), f"{r['figures']['errors']:,}",
                f"{r['figures']['steal_s']:.1f}", report_md.fmt_pct(r["figures"]["foreign_cpu_share"]),
                ", ".join(r["flags"]) or "ok"] for r in doc["rounds"]])]
    if not doc.get("complete") and not doc.get("refused"):
        out += ["", "**This run did not complete**: what is above is what it finished."]
    out += ["", "Repeat it with:", "", f"    {doc['command']}", ""]
    return "\n".join(out)
