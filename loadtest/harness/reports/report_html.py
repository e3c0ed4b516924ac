"""report.html from results.json: ONE self-contained file (inline CSS and SVG, no script, no CDN)
that opens offline and can be mailed to a colleague."""
import json
import re

from harness.reports import report_md, results, svg
from harness.reports.svg import esc

CSS = """
body{font-family:sans-serif;max-width:1340px;margin:20px auto;padding:0 12px;color:#222}
h1{font-size:24px}h2{font-size:19px;margin-top:34px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}caption{text-align:left;font-size:12px}figure{margin:0}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
td:first-child,th:first-child,td:last-child{text-align:left}th{background:#f2f2f2}
.flag{color:#b00;font-weight:bold}.ok{color:#070}.note{color:#555;font-size:13px;max-width:1100px}
.low{background:#fde0dc;color:#a00;font-weight:bold}table.nums td:last-child{text-align:right}
.charts{display:flex;flex-wrap:wrap;gap:8px}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow-x:auto}
"""


def html_table(header, rows, numbers: bool = False) -> str:
    """Cells holding a flag's name are red; a share of the bound under the goal is shaded.
    numbers: the last column holds numbers too (right-aligned like the others; otherwise it is text)."""
    def cell(c):
        text = esc(c)
        if report_md.BELOW_GOAL in str(c):
            return f'<td class="low">{text}</td>'
        if c in report_md.FLAG_MEANING or any(f in str(c) for f in report_md.FLAG_MEANING):
            return f'<td class="flag">{text}</td>'
        return f"<td>{text}</td>"
    return (f"<table{' class=nums' if numbers else ''}><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"
            + "".join("<tr>" + "".join(cell(c) for c in row) + "</tr>" for row in rows) + "</table>")


def colours(doc) -> dict:
    names = [s["name"] for s in doc["stacks"]]
    return {n: svg.PALETTE[i % len(svg.PALETTE)] for i, n in enumerate(names)}


def chart_width(doc) -> int:
    """Wide enough for every stack's bar in every endpoint's group, no wider."""
    names = report_md.benchmarked(doc)
    return max(660, min(1300, 110 + len(report_md.endpoints(doc)) * (40 + 34 * max(1, len(names)))))


def per_stack_bars(doc, title: str, unit: str, value, markers: dict | None = None, log: bool = False) -> str:
    """One bar per stack in each endpoint's group: value(endpoint dict) -> number or None."""
    stacks = report_md.benchmarked(doc)
    values = {(e, s["name"]): value(ep) for s in stacks for e, ep in s["endpoints"].items()}
    return svg.bar_chart(title, report_md.endpoints(doc), [s["name"] for s in stacks], values, unit, colours(doc),
                         markers, log=log, width=chart_width(doc))


def throughput_chart(doc) -> str:
    """Headline throughput per stack and endpoint, with the ceiling at the same concurrency."""
    stacks = report_md.benchmarked(doc)
    marks = {}
    for e in report_md.endpoints(doc):
        cs = [s["endpoints"][e]["headline"]["connections"] for s in stacks if e in s["endpoints"]]
        ceil = [c for c in (results.ceiling_for(doc, e, c) for c in cs) if c]
        if ceil and e != "sleep":
            marks[e] = max(ceil)
    return per_stack_bars(doc, "Throughput at each stack's best concurrency (median of repeats)", "requests / s",
                          lambda ep: ep["headline"]["throughput_rps"]["median"], marks)


def profile_chart(doc, name: str) -> str:
    """One group per run of the profile, one bar per stack: its own figure (connections, valid answers) or req/s."""
    stacks = report_md.benchmarked(doc)
    values, groups, unit = {}, [], "requests / s"
    for x in stacks:
        for rec in ((x.get("profiles") or {}).get(name) or {}).get("runs", []):
            label = rec["profile_run"]
            groups += [label] if label not in groups else []
            figure = next((k for k in ("connections_per_s", "valid_rps") if k in rec), "throughput_rps")
            unit = {"connections_per_s": "connections / s", "valid_rps": "valid answers / s"}.get(figure, unit)
            values[(label, x["name"])] = rec.get(figure)
    if not values:
        return ""
    width = max(660, min(1300, 110 + len(groups) * (40 + 34 * len(stacks))))
    return svg.bar_chart(f"Profile {name}: {unit} per stack", groups, [x["name"] for x in stacks], values, unit,
                         colours(doc), None, width=width)


def sweep_charts(doc) -> str:
    """Throughput against connections per endpoint, knee circled, ceiling dashed."""
    stacks, col, out = report_md.benchmarked(doc), colours(doc), []
    for e in report_md.endpoints(doc):
        lines, knees = {}, {}
        for s in stacks:
            ep = s["endpoints"].get(e)
            if ep:
                lines[s["name"]] = [(r["connections"], r.get("throughput_rps")) for r in ep["sweep"]]
                knees[s["name"]] = ep["knee_connections"]
        ceiling = [(c, results.ceiling_for(doc, e, c)) for c in doc["settings"]["concurrency"]]
        ceiling = [(c, v) for c, v in ceiling if v]
        # Little's law for /sleep grows 64x over the sweep and would flatten the stacks' lines: shown in the table only.
        out.append(svg.line_chart(f"/{e}: throughput vs connections", lines, col, "requests / s", "connections (log scale)",
                                  knees, ceiling if e != "sleep" else None))
    return '<div class="charts">' + "".join(out) + "</div>"


def steadiness_charts(doc) -> str:
    """Per-second throughput of the best run: is the rate steady, or does it drift or stall?"""
    stacks, col, out = report_md.benchmarked(doc), colours(doc), []
    for e in report_md.endpoints(doc):
        lines = {}
        for s in stacks:
            ep = s["endpoints"].get(e)
            if ep:
                best = next((r for r in ep["sweep"] if r["connections"] == ep["headline"]["connections"]), None)
                series = (best or {}).get("per_second_rps") or []
                if len(series) >= 3:
                    lines[s["name"]] = list(enumerate(series, start=1))
        if lines:
            out.append(svg.line_chart(f"/{e}: per-second throughput of the best run", lines, col, "requests / s",
                                      "second of the run", xlog=False, width=640, height=260))
    return '<div class="charts">' + "".join(out) + "</div>" if out else ""


def open_run(ep: dict | None, rate: float) -> dict | None:
    return next((r for r in (ep or {}).get("open_loop", []) if r.get("fraction_of_peak") == rate
                 and r.get("latency_ms")), None)


def percentile_curve(run: dict) -> list[tuple[float, float]]:
    """(percentile, ms) from p50 up, leaving out the percentiles the run's request count cannot
    resolve (fewer than one request above them: they would only repeat the slowest). A run
    recorded before results.json kept oha's whole curve has p50, p90, p99 and p99.9 only."""
    pct = run.get("percentiles_ms") or {k[1:]: v for k, v in run["latency_ms"].items()
                                         if k.startswith("p") and k[1:].replace(".", "").isdigit()}
    n = run.get("requests") or 0
    return sorted((float(p), v) for p, v in pct.items()
                  if v is not None and float(p) >= 50 and n * (1 - float(p) / 100) >= 1)


def latency_curve_charts(doc) -> str:
    """Per endpoint, one chart per open-loop rate: latency against percentile, one line per stack."""
    stacks, col = report_md.benchmarked(doc), colours(doc)
    rows = []
    for e in report_md.endpoints(doc):
        charts_ = []
        for rate in sorted(doc["settings"]["open_rates"]):
            lines, line_col, dashed = {}, {}, set()
            for s in stacks:
                run = open_run(s["endpoints"].get(e), rate)
                curve = percentile_curve(run) if run else []
                if not curve:
                    continue
                label = f"{s['name']} {svg.short(run['target_rate_rps'])}/s" + (" ⚑" if run.get("flags") else "")
                lines[label], line_col[label] = curve, col[s["name"]]
                if "behind-rate" in run.get("flags", []):
                    dashed.add(label)
            charts_.append(svg.percentile_chart(f"/{e}: open loop at {rate:.0%} of each stack's peak", lines,
                                                line_col, dashed))
        if any(charts_):
            rows.append('<div class="charts">' + "".join(charts_) + "</div>")
    return "\n".join(rows)


def latency_bar_charts(doc) -> str:
    """Open-loop latency percentiles at the highest rate (coordinated-omission corrected)."""
    if not doc["settings"]["open_rates"]:
        return ""
    rate = max(doc["settings"]["open_rates"])
    stacks, col, out = report_md.benchmarked(doc), colours(doc), []
    names = [s["name"] for s in stacks]
    for e in report_md.endpoints(doc):
        vals = {}
        for s in stacks:
            run = open_run(s["endpoints"].get(e), rate)
            if run:
                for p in ("p50", "p90", "p99", "p99.9", "max"):
                    vals[(p, s["name"])] = run["latency_ms"][p]
        out.append(svg.bar_chart(f"/{e}: open-loop latency at {rate:.0%} of peak (ms, log scale)",
                                 ["p50", "p90", "p99", "p99.9", "max"], names, vals, "ms", col, log=True,
                                 width=640, height=300))
    return '<div class="charts">' + "".join(out) + "</div>"


def efficiency_charts(doc) -> str:
    return "\n".join([
        per_stack_bars(doc, "Requests per CPU-second of the server (higher is better)", "requests / CPU-second",
                       lambda ep: (ep.get("efficiency") or {}).get("requests_per_cpu_second")),
        per_stack_bars(doc, "req/s per MiB of peak RSS (higher is better)", "req/s per MiB",
                       lambda ep: (ep.get("efficiency") or {}).get("rps_per_mib_peak_rss"))])


def memory_chart(doc) -> str:
    def peak_mib(ep):
        peak, _ = report_md.memory_of(ep)
        return peak / 2**20 if peak else None
    return per_stack_bars(doc, "Peak RSS of the server's process tree", "MiB", peak_mib)


def charts(doc, overview: bool = True) -> str:
    """The charts of the report's Charts section (throughput, unless the Overview shows it; sweeps, steadiness,
    latency bars, memory)."""
    return "\n".join(c for c in (throughput_chart(doc) if overview else "", sweep_charts(doc), steadiness_charts(doc),
                                  latency_bar_charts(doc), memory_chart(doc)) if c)


HOW_TO_READ = f"""<p class="note">How to read it: closed-loop numbers (wrk) are the most a stack serves at a given
number of connections; their latencies are optimistic, because a stalled server also stalls the client
(coordinated omission). Open-loop runs (oha, fixed arrival rate, latency measured from the intended send
time) show the latency a user arriving at that rate sees. A <span class="flag">flag</span> means the number is not
the server's alone: <b>generator-saturated</b> = the load generator ran out of CPU; <b>disturbed</b> = other
work on the machine took CPU during the run. "of ceiling" compares with what no stack can beat at the same
concurrency (nginx <code>return 200</code>, Little's law for /sleep, the backend's own benchmark tool).</p>
<p class="note"><b>Share of the bound</b> (data endpoints, "of bound"): on one server CPU a data request costs at
least the stack's own HTTP work, what its <code>/hello</code> costs, plus the backend client's work, at best what
the backend's own benchmark tool costs. So the most a stack can serve is
<b>bound = 1 / (1/hello + 1/ceiling)</b>, where <i>hello</i> = the stack's <code>/hello</code> headline in this run
(median req/s at its best concurrency), <i>ceiling</i> = the backend tool's ceiling at the connections of the
endpoint's headline, measured again right after the headline runs (else the one of the run's start), and
<b>share = data / bound</b> with <i>data</i> = the endpoint's headline. Shaded
{report_md.BELOW_GOAL} = under the goal of {results.BOUND_GOAL:.0%}. ≤: <code>/hello</code> was generator-saturated,
so the true bound is higher and the share at most this; ≥: the endpoint itself was, or the backends' CPUs were at
least {results.BACKENDS_SATURATED:.0%} busy (the backend, sharing them with the load generator, set the pace; the
ceiling tools had them to the backend alone), so the share is at least this; –: a figure is missing.</p>
<p class="note"><b>Efficiency</b> (headline runs): requests per CPU-second = 1e6 / the server's CPU µs per request
(its whole process tree); req/s per MiB = headline req/s / the largest RSS of the tree during those runs.
<b>Latency curves</b>: open-loop latency against percentile (x: log scale of 1 / (1 − p), so p90, p99, p99.9 are
evenly spaced; y: log scale), one line per stack at the stated fraction of that stack's own peak (its rate in the
legend); a dashed line is a run that fell behind its rate, ⚑ a flagged run.</p>"""


def link(url: str) -> str:
    """An upstream link; only http(s) URLs (the manifest's validation) become anchors."""
    if url.startswith(("https://", "http://")):
        return f'<a href="{esc(url)}">{esc(url)}</a>'
    return esc(url)


def deviations_html(doc) -> str:
    """The stacks verified with known deviations, each case with what it does, why, and its upstream bug."""
    items = report_md.deviation_items(doc)
    if not items:
        return ""
    text = esc(report_md.DEVIATIONS_TEXT).replace("`stack.toml`", "<code>stack.toml</code>")
    out = [f"<p class='note'>{text}</p><ul>"]
    for name, known in items:
        out.append(f"<li><b>{esc(name)}</b> {report_md.DEVIATION_MARK}, {len(known)} known deviation"
                   f"{'s' if len(known) != 1 else ''}:<ul>" + "".join(
                       f"<li>{esc(d['check'])}: <i>{esc(d['case'])}</i>: {esc(report_md.observed_text(d['observed']))} "
                       f"(<code>{esc(d['observed'])}</code>). {esc(d['why'])} Upstream: {link(d['upstream'])}</li>"
                       for d in known) + "</ul></li>")
    return "".join(out) + "</ul>"


def render(doc) -> str:
    md_head = report_md.render(doc).split("## Overview")[0]
    bullets = [line[2:] for line in md_head.splitlines() if line.startswith("- ")]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Benchmark {esc(doc['started'])}</title>"
             f"<style>{CSS}</style></head><body>",
             f"<h1>Benchmark report, {esc(doc['started'])}</h1>"]
    if not doc.get("complete"):
        parts.append('<p class="flag">This run did not complete: what follows is what it finished.</p>')
    if doc["settings"].get("quick"):
        parts.append(f'<p class="flag quick">{esc(report_md.QUICK_WARNING)}</p>')
    parts.append("<ul>" + "".join(f"<li>{esc(b).replace('`', '')}</li>" for b in bullets) + "</ul>")
    marked = report_md.deviation_items(doc)
    # What a reader looks at first: the overview as a chart, then its table; how to read it comes after the figures.
    parts.append("<h2>Overview</h2>" + throughput_chart(doc)
                 + "<p class='note'>Best closed-loop req/s per stack and endpoint (median of the repeats), "
                 "in brackets its share of the ceiling at the same concurrency; ⚑ = a flagged run"
                 + (f"; {report_md.DEVIATION_MARK} = verified with known deviations (below)" if marked else "") + ".</p>"
                 + html_table(["stack"] + [f"/{e}" for e in report_md.endpoints(doc)], report_md.overview_rows(doc), numbers=True)
                 + deviations_html(doc))
    parts.append("<h2>Stacks</h2>" + html_table(["stack", "status", "detail"],
                 [[report_md.stack_name(x), x.get("status", "?"), x.get("reason") or report_md.verify_detail(x)]
                  for x in doc["stacks"]]))
    for title, header, rows in report_md.hosts_tables(doc):
        parts.append(f"<h2>{esc(title)}</h2>" + html_table(header, rows))
    header, rows = report_md.bound_matrix(doc)
    if rows:
        parts.append("<h2>Share of the bound</h2><p class='note'>Data endpoints: headline req/s / (1 / (1/hello + "
                     f"1/ceiling)); shaded {report_md.BELOW_GOAL} = under {results.BOUND_GOAL:.0%} (see How to read)."
                     "</p>" + html_table(header, rows, numbers=True) + html_table(*report_md.bound_rows(doc), numbers=True))
    parts.append("<h2>Efficiency</h2><p class='note'>From each endpoint's headline runs; higher is better.</p>"
                 "<h3>Requests per CPU-second</h3>" + html_table(*report_md.efficiency_matrix(doc, "requests_per_cpu_second"), numbers=True)
                 + "<h3>req/s per MiB of peak RSS</h3>" + html_table(*report_md.efficiency_matrix(doc, "rps_per_mib_peak_rss"), numbers=True)
                 + efficiency_charts(doc))
    curves = latency_curve_charts(doc)
    if curves:
        parts.append("<h2>Open-loop latency by percentile</h2><p class='note'>oha at fixed arrival rates (fractions "
                     "of each stack's own headline req/s; the rate of each line is in its legend), latency measured "
                     "from the intended send time. Percentiles the run's request count cannot resolve are left out."
                     "</p>" + curves)
    parts.append("<h2>Charts</h2>" + charts(doc, overview=False))
    for e in report_md.endpoints(doc):
        parts.append(f"<h2>/{esc(e)}</h2>")
        rows = report_md.endpoint_rows(doc, e)
        if rows:
            parts.append(html_table(report_md.endpoint_header(doc), rows))
        sweep = report_md.sweep_rows(doc, e)
        if sweep:
            parts.append("<p class='note'>Throughput (req/s) by connections; ◆ marks the knee.</p>"
                         + html_table(["stack"] + [str(c) for c in doc["settings"]["concurrency"]], sweep))
    for name in report_md.profile_names(doc):
        parts.append(f"<h2>Profile: {esc(name)}</h2><p class='note'>{esc(report_md.profile_about(doc, name))}; "
                     "⚑ flags as in Flags below.</p>" + profile_chart(doc, name)
                     + html_table(report_md.PROFILE_HEADER, report_md.profile_rows(doc, name)))
    parts.append("<h2>Per stack</h2>")
    for x in report_md.benchmarked(doc):
        parts.append(f"<h3>{esc(report_md.stack_name(x))}</h3>"
                     + html_table(report_md.stack_header(doc), report_md.stack_rows(doc, x)))
        if known := report_md.deviations_of(x):
            parts.append(f"<p class='note'>{report_md.DEVIATION_MARK} Verified with {len(known)} known deviation"
                         f"{'s' if len(known) != 1 else ''}: " + "; ".join(
                             f"<i>{esc(d['case'])}</i> {esc(d['observed'])} ({link(d['upstream'])})" for d in known)
                         + "</p>")
    parts.append("<h2>How to read this report</h2>" + HOW_TO_READ)
    parts.append("<h2>Ceilings</h2>" + html_table(
        ["endpoint", "conns", "req/s", "how"],
        [[c["endpoint"], c["connections"], report_md.fmt_rps(c.get("throughput_rps")), f"{c['tool']}: {c.get('method', '')}"]
         for c in doc["ceilings"]]))
    parts.append("<h2>Flags</h2><ul>" + "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for k, v in report_md.FLAG_MEANING.items()) + "</ul>")
    versions = [[k, v] for k, v in doc["tools"].items()] + [[f"{x['name']}: {k}", v] for x in doc["stacks"]
                                                            for k, v in (x.get("versions") or {}).items()]
    parts.append("<h2>Versions</h2>" + html_table(["what", "version"], versions))
    parts.append("<h2>Machine and configuration</h2><pre>" + esc(json.dumps(
        {"machine": doc["machine"], "cpu_layout": doc["cpu_layout"], "limits": doc["limits"], "settings": doc["settings"],
         "git": doc["git"], "services": doc["services"],
         "mysql_thread_handling": doc.get("mysql_thread_handling"), "estimate": doc.get("estimate")}, indent=1)) + "</pre>")
    parts.append("<p class='note'>Raw tool output for every run: <code>raw/</code> beside this file; the data: "
                 "<code>results.json</code> (schema in loadtest/RESULTS.md).</p></body></html>")
    page = "\n".join(parts)
    return quick_marked(page) if doc["settings"].get("quick") else page


def quick_marked(page: str) -> str:
    """Every table and chart of a QUICK pass says that it is not comparable, so that none can be quoted alone."""
    mark = esc(report_md.QUICK_MARK)
    page = page.replace("<table", f"<table data-quick")
    page = re.sub(r"<table data-quick([^>]*)>", rf"<table\1><caption class='flag'>{mark}</caption>", page)
    return re.sub(r"(<svg\b.*?</svg>)", rf"<figure class='quick'><figcaption class='flag'>{mark}</figcaption>\1</figure>",
                  page, flags=re.S)
