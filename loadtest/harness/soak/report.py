"""A soak's report, from its results.json alone: the verdicts first, then latency, throughput, memory,
CPU and GC pauses over time. report.md (also what the terminal shows) and report.html (one
self-contained page: inline CSS and SVG, opens offline)."""
import json

from harness.reports import report_md, svg
from harness.reports.report_html import CSS, html_table
from harness.reports.svg import esc
from harness.soak.verdicts import FLAGS

MIB = 2**20
FLAG = "⚑"
COLOURS = {"p50": "#2ca02c", "p99": "#1f77b4", "max": "#d62728", "offered": "#7f7f7f", "answered": "#1f77b4",
           "errors": "#d62728", "RSS": "#9467bd", "PSS": "#8c564b", "fit over the second half": "#555",
           "server CPU": "#ff7f0e", "GC pause": "#d62728", "longest pause in the window": "#1f77b4"}
CAVEATS = {"disturbed", "generator-saturated", "lead-in"}  # window flags that flag nothing (a caveat, or not judged)
MAX_LISTED = 30  # flagged windows listed in the report; all of them are in results.json


def title(doc: dict) -> str:
    p = doc.get("plan") or {}
    what = f"{doc['stack']['name']} /{doc['endpoint']}"
    if p.get("rate_rps"):
        what += (f", {p['windows'] * p['window_s'] / 60:g} min at {p['rate_rps']:,} req/s in {p['window_s']} s windows, "
                 f"{p['connections']} connections")
    return what


def state(doc: dict) -> str | None:
    """Why the soak is not whole, or None."""
    if doc.get("refused"):
        return f"Refused: {doc['refused']}"
    if doc.get("exited"):
        return f"The stack exited: {doc['exited']}"
    if doc.get("interrupted"):
        return f"Interrupted after {len(doc['windows'])} of {(doc.get('plan') or {}).get('windows', '?')} windows: what follows is what it measured."
    if not doc.get("complete"):
        return "This soak did not complete: what follows is what it measured."
    return None


def facts(doc: dict) -> list[str]:
    p, m, lay = doc.get("plan") or {}, doc["machine"], doc["cpu_layout"]
    out = [f"{doc['started']}, commit `{(doc['git'].get('commit') or '?')[:12]}`"
           + (" (uncommitted changes)" if doc["git"].get("dirty") else "")
           + f", {m.get('cpu_model')} ({m.get('cpus')} CPUs), server on CPU {lay.get('server')}, load generator on "
           f"{lay.get('loadgen')}"]
    if p.get("rate_rps"):
        out.append(f"rate {p['rate_rps']:,} req/s: {p.get('rate_source')}; {p['connections']} connections "
                   f"({p.get('connections_source')}); one oha run per window, open loop, latency corrected")
    out.append(f"stack environment: `{doc['env_text']}`" if doc.get("env_text") else "stack environment: the defaults")
    gc = doc["gc"]
    out.append(f"GC log: {gc['log']}" if gc.get("log") else f"GC: {gc.get('why_not')}")
    again = doc.get("rejudged")
    if again:
        as_run = " ".join(again.get("flags_as_run") or []) or "none"
        out.append(f"verdicts drawn again from the stored windows on {again['at']} by commit "
                   f"`{((again.get('git') or {}).get('commit') or '?')[:12]}` (`make report`); as the soak ran, the flags were: "
                   f"{as_run}")
    return out


def verdict_rows(doc: dict) -> list[list[str]]:
    v = doc.get("verdicts")
    if not v or not v["windows"]:
        return []  # nothing measured, nothing to judge: state() says why
    th = v["thresholds"]
    mem, lat, thr, err, gc = v["memory"], v["latency"], v["throughput"], v["errors"], v["gc"]

    def mark(flag):
        return f"{FLAG} " if flag else "ok "
    rows = [
        ["memory", ("– cannot tell" if mem["leak"] is None else mark(mem["leak"]) + (
            "leak" if mem["leak"] else "levelled off" if mem.get("levelled_off") else
            "sawtooth" if (mem.get("sawtooth") or {}).get("bounded") else "no leak")),
         mem["why"], f"> {th['leak_mib_per_h']:g} MiB/h, 95% interval above 0, > {th['leak_min_mib']:g} MiB over the span, "
         "and over the last quarter > that rate with its interval above 0; not a sawtooth (two or more falls of "
         f"> {th.get('release_fraction', 0.2):.0%}, the floors after them not rising, no RSS after the last above the peak before it)"],
        ["latency", (mark(True) + f"{len(lat['stall_windows'])} stall window(s)" if lat["stall"] else
                     mark(True) + f"{len(lat['stall_windows'])} stall window(s), all disturbed" if lat.get("disturbed_stall") else
                     mark(False) + "no stall"),
         lat["why"], f"p99 or max > max({th['stall_factor']:g} x the usual p99 (10th percentile of the windows'), "
         f"{th['stall_floor_ms']:g} ms), or no answers; `disturbed-stall` when every such window is disturbed or next to one"],
        ["GC", (mark(gc["flagged"]) + (f"longest {report_md.fmt_ms(gc['longest_ms'])} ms" if gc.get("longest_ms") is not None
                                      else "no pause")) if gc["available"] else "no GC log",
         gc["why"] or "", f"a pause > {lat['threshold_ms']:,.1f} ms (the stall threshold)" if gc["available"] else ""],
        ["errors", mark(err["flagged"]) + f"{err['count']:,}", err["why"], "any"],
        ["throughput", mark(thr["behind"]) + ("behind" if thr["behind"] else "kept up"), thr["why"],
         f"< {th['behind_fraction']:.0%} of offered, in a window or overall"],
    ]
    lead = v.get("lead_in")
    if lead and lead.get("window"):
        rows.append(["start", "– lead-in" + (", over the stall threshold" if lead["over_threshold"] else ""),
                     lead["why"], "never: the start of the load is shown, not judged"])
    if doc.get("exited"):
        rows.append(["stack", f"{FLAG} exited", doc["exited"], "alive to the end"])
    return rows


def flagged_windows(doc: dict) -> list[dict]:
    return [w for w in doc["windows"] if set(w.get("flags") or []) - CAVEATS]


def window_row(w: dict) -> list[str]:
    return [report_md_time(w["t_s"]), f"{w.get('answered') or 0:,} / {w['offered']:,}",
            f"{sum((w.get('errors') or {}).values()):,}", report_md.fmt_ms(w.get("p50_ms")),
            report_md.fmt_ms(w.get("p99_ms")), report_md.fmt_ms(w.get("max_ms")),
            "–" if w.get("gc_longest_ms") is None else report_md.fmt_ms(w["gc_longest_ms"]),
            report_md.fmt_mib(w.get("rss_bytes")), report_md.fmt_pct(w.get("server_cpu_share")),
            ", ".join(w.get("flags") or []) or "ok"]


WINDOW_HEADER = ["at", "answered / offered", "errors", "p50 ms", "p99 ms", "max ms", "longest GC ms", "RSS MiB",
                 "server CPU", "flags"]


def report_md_time(seconds: float) -> str:
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


def flags_line(doc: dict) -> str:
    v = doc.get("verdicts") or {}
    if not v.get("flags"):
        return "No flag: no leak, no stall, no long GC pause, no error, and it kept up with the offered rate."
    return "**Flagged**: " + "; ".join(f"{FLAG} {f}: {FLAGS[f]}" for f in v["flags"])


def caveats(doc: dict) -> list[str]:
    out = []
    disturbed = [w for w in doc["windows"] if "disturbed" in (w.get("flags") or [])]
    if disturbed:
        out.append(f"{len(disturbed)} window(s) where other work or the hypervisor took more than "
                   f"{doc['settings']['foreign_max']:.0%} of the machine (steal included): their latency may not be "
                   "the server's alone")
    saturated = [w for w in doc["windows"] if "generator-saturated" in (w.get("flags") or [])]
    if saturated:
        out.append(f"{len(saturated)} window(s) where the load generator's runs used more than 90 % of its CPUs: "
                   "their latency and a shortfall may be the generator's, not the server's")
    failed = [w for w in doc["windows"] if w.get("failure")]
    if failed:
        out.append(f"{len(failed)} window(s) without oha output (counted as unanswered): {failed[0]['failure']}")
    gc = doc["gc"]
    if gc.get("available") and gc.get("pauses") and any(p[0] is None for p in gc["pauses"]):
        out.append("some GC pauses could not be placed in time (their process was never seen in the server's tree)")
    if gc.get("unreadable_lines"):
        out.append(f"{gc['unreadable_lines']:,} GC log line(s) could not be read (cut by another process's output): "
                   "their pauses are missing")
    if gc.get("before_soak"):
        out.append(f"{gc['before_soak']:,} GC pauses during start-up and warm-up are not counted")
    return out


def render_md(doc: dict) -> str:
    out = [f"## Soak: {title(doc)}", ""] + [f"- {f}" for f in facts(doc)]
    problem = state(doc)
    if problem:
        out += ["", f"**{problem}**"]
    rows = verdict_rows(doc)
    if rows:
        out += ["", flags_line(doc), "", report_md.table(["verdict", "result", "figure", "flagged when"], rows)]
    out += [f"- ⚑ {c}" for c in caveats(doc)]
    flagged = flagged_windows(doc)
    if flagged:
        out += ["", f"Flagged windows ({len(flagged)}{f', the first {MAX_LISTED}' if len(flagged) > MAX_LISTED else ''}):", "",
                report_md.table(WINDOW_HEADER, [window_row(w) for w in flagged[:MAX_LISTED]])]
    if doc.get("command"):
        out += ["", "Repeat it with:", "", f"    {doc['command']}"]
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------- charts

def _spans(doc: dict, flags=("stall", "behind", "errors")) -> list:
    return [(w["t_s"], w["t_s"] + w["seconds"], f"{', '.join(w['flags'])} at {report_md_time(w['t_s'])}")
            for w in doc["windows"] if set(w.get("flags") or []) & set(flags)]


def _mid(w: dict) -> float:
    return w["t_s"] + w["seconds"] / 2


def latency_chart(doc: dict) -> str:
    ws = doc["windows"]
    v = doc.get("verdicts") or {}
    threshold = (v.get("latency") or {}).get("threshold_ms")
    lines = {k: [(_mid(w), w.get(f"{k}_ms")) for w in ws] for k in ("p50", "p99", "max")}
    return svg.time_chart("Latency per window (ms, log scale; open loop, corrected for coordinated omission)", lines,
                          COLOURS, "ms", log=True, spans=_spans(doc, ("stall",)), x_max=_end(doc),
                          hline=(threshold, f"stall threshold {threshold:,.0f} ms") if threshold else None)


def throughput_chart(doc: dict) -> str:
    ws = doc["windows"]
    lines = {"offered": [(_mid(w), w["offered"] / w["seconds"]) for w in ws],
             "answered": [(_mid(w), (w.get("answered") or 0) / w["seconds"]) for w in ws],
             "errors": [(_mid(w), sum((w.get("errors") or {}).values()) / w["seconds"]) for w in ws]}
    return svg.time_chart("Throughput per window (req/s)", lines, COLOURS, "requests / s", spans=_spans(doc, ("behind", "errors")),
                          dashed={"offered"}, x_max=_end(doc))


def memory_chart(doc: dict) -> str:
    ws = doc["windows"]
    lines = {"RSS": [(w["t_s"] + w["seconds"], (w.get("rss_bytes") or 0) / MIB or None) for w in ws],
             "PSS": [(w["t_s"] + w["seconds"], (w.get("pss_bytes") or 0) / MIB or None) for w in ws]}
    mem = (doc.get("verdicts") or {}).get("memory") or {}
    if mem.get("slope_mib_per_h") is not None:
        per_s = mem["slope_mib_per_h"] / 3600
        lines["fit over the second half"] = [(x, mem["intercept_mib"] + per_s * x) for x in (mem["from_s"], mem["to_s"])]
    return svg.time_chart("Memory of the server's process tree (MiB, at the end of each window)", lines, COLOURS, "MiB",
                          dashed={"fit over the second half"}, x_max=_end(doc))


def cpu_chart(doc: dict) -> str:
    ws = doc["windows"]
    lines = {"server CPU": [(_mid(w), None if w.get("server_cpu_share") is None else 100 * w["server_cpu_share"]) for w in ws]}
    return svg.time_chart("Server CPU per window (% of its CPUs)", lines, COLOURS, "%", x_max=_end(doc))


def gc_chart(doc: dict) -> str:
    gc = doc["gc"]
    if not gc.get("available"):
        return ""
    lines = {"GC pause": [(p[0], p[1]) for p in gc["pauses"] if p[0] is not None],
             "longest pause in the window": [(_mid(w), w.get("gc_longest_ms") or None) for w in doc["windows"]]}
    if not any(lines.values()):
        return ""
    return svg.time_chart("GC pauses (ms, log scale): each pause, and the longest of each window", lines, COLOURS, "ms",
                          log=True, dots={"GC pause"}, x_max=_end(doc))


def _end(doc: dict) -> float:
    p = doc.get("plan") or {}
    return p.get("duration_s") or sum(w["seconds"] for w in doc["windows"]) or 1.0


HOW_TO_READ = """<p class="note">How to read it: every window is one oha run at the soak's fixed arrival rate
(open loop: requests are sent on schedule whatever the server does, and each latency counts from when the request
should have been sent, so a stall shows in full). The verdicts are drawn from the windows alone; their thresholds are
in the table and in <code>results.json</code> (<code>verdicts.thresholds</code>). Shaded: flagged windows. Memory is
the server's whole process tree (RSS counts shared pages once per process, PSS splits them) read at the end of each
window; the dashed line is the Theil-Sen fit the leak verdict uses. GC pauses come from the runtime's own log; a
soak without one says why.</p>"""


def render_html(doc: dict) -> str:
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Soak {esc(doc['stack']['name'])} "
             f"/{esc(doc['endpoint'])} {esc(doc['started'])}</title><style>{CSS}</style></head><body>",
             f"<h1>Soak: {esc(title(doc))}</h1>"]
    problem = state(doc)
    if problem:
        parts.append(f'<p class="flag">{esc(problem)}</p>')
    parts.append("<ul>" + "".join(f"<li>{esc(f).replace('`', '')}</li>" for f in facts(doc)) + "</ul>")
    rows = verdict_rows(doc)
    if rows:
        line = flags_line(doc).replace("**", "")
        parts.append(f"<h2>Verdicts</h2><p class='{'flag' if (doc.get('verdicts') or {}).get('flags') else 'ok'}'>"
                     f"{esc(line)}</p>" + _verdict_table(rows))
    cav = caveats(doc)
    if cav:
        parts.append("<ul>" + "".join(f"<li class='note'>⚑ {esc(c)}</li>" for c in cav) + "</ul>")
    parts.append(HOW_TO_READ)
    if doc["windows"]:
        parts.append("<h2>Over time</h2>" + "".join(c for c in (latency_chart(doc), throughput_chart(doc), memory_chart(doc),
                                                                 cpu_chart(doc)) if c))
        gc = gc_chart(doc)
        parts.append("<h2>GC pauses</h2>" + (gc or f"<p class='note'>{esc(doc['gc'].get('why_not') or 'no GC pause logged')}</p>"))
    flagged = flagged_windows(doc)
    if flagged:
        parts.append(f"<h2>Flagged windows ({len(flagged)})</h2>"
                     + (f"<p class='note'>The first {MAX_LISTED}; every window is in results.json.</p>" if len(flagged) > MAX_LISTED else "")
                     + html_table(WINDOW_HEADER, [window_row(w) for w in flagged[:MAX_LISTED]]))
    if doc.get("command"):
        parts.append(f"<h2>Repeat it</h2><pre>{esc(doc['command'])}</pre>")
    parts.append("<h2>Settings and machine</h2><pre>" + esc(json.dumps(
        {"plan": doc.get("plan"), "settings": doc["settings"], "machine": doc["machine"], "cpu_layout": doc["cpu_layout"],
         "limits": doc.get("limits"), "git": doc["git"], "tools": doc.get("tools"), "versions": doc.get("versions"),
         "gc": {k: v for k, v in doc["gc"].items() if k != "pauses"}}, indent=1)) + "</pre>")
    parts.append("<p class='note'>Every window's oha output: <code>raw/windows/</code>; GC logs: <code>raw/gc/</code> "
                 "(JVM) or <code>raw/stack-run.log</code> (Node); the series and the verdicts: <code>results.json</code> "
                 "(schema in loadtest/RESULTS.md).</p></body></html>")
    return "\n".join(parts)


def _verdict_table(rows) -> str:
    out = ["<table><tr><th>verdict</th><th>result</th><th>figure</th><th>flagged when</th></tr>"]
    for row in rows:
        cls = "flag" if row[1].startswith(FLAG) else "ok" if row[1].startswith("ok") else ""
        out.append(f"<tr><td>{esc(row[0])}</td><td class='{cls}'>{esc(row[1])}</td><td>{esc(row[2])}</td>"
                   f"<td>{esc(row[3])}</td></tr>")
    return "".join(out) + "</table>"
