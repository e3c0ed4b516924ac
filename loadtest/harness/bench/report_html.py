"""report.html from results.json: ONE self-contained file (inline CSS and SVG, no script, no CDN)
that opens offline and can be mailed to a colleague."""
import json

from . import report_md, results, svg
from .svg import esc

CSS = """
body{font-family:sans-serif;max-width:1340px;margin:20px auto;padding:0 12px;color:#222}
h1{font-size:24px}h2{font-size:19px;margin-top:34px;border-bottom:1px solid #ccc}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;text-align:right}
td:first-child,th:first-child,td:last-child{text-align:left}th{background:#f2f2f2}
.flag{color:#b00;font-weight:bold}.ok{color:#070}.note{color:#555;font-size:13px}
.charts{display:flex;flex-wrap:wrap;gap:8px}pre{background:#f6f6f6;padding:8px;font-size:12px;overflow-x:auto}
"""


def html_table(header, rows) -> str:
    def cell(c):
        text = esc(c)
        if c in report_md.FLAG_MEANING or any(f in str(c) for f in report_md.FLAG_MEANING):
            return f'<td class="flag">{text}</td>'
        return f"<td>{text}</td>"
    return ("<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in header) + "</tr>"
            + "".join("<tr>" + "".join(cell(c) for c in row) + "</tr>" for row in rows) + "</table>")


def colours(doc) -> dict:
    names = [s["name"] for s in doc["stacks"]]
    return {n: svg.PALETTE[i % len(svg.PALETTE)] for i, n in enumerate(names)}


def charts(doc) -> str:
    stacks = report_md.benchmarked(doc)
    names = [s["name"] for s in stacks]
    col = colours(doc)
    eps = report_md.endpoints(doc)
    # wide enough for every stack's bar in every endpoint's group, no wider
    wide = max(660, min(1300, 110 + len(eps) * (40 + 34 * max(1, len(names)))))
    out = []
    # 1. headline throughput per stack and endpoint, with the ceiling at the same concurrency
    values, marks = {}, {}
    for s in stacks:
        for e, ep in s["endpoints"].items():
            values[(e, s["name"])] = ep["headline"]["throughput_rps"]["median"]
    for e in eps:
        cs = [s["endpoints"][e]["headline"]["connections"] for s in stacks if e in s["endpoints"]]
        ceil = [results.ceiling_for(doc, e, c) for c in cs]
        ceil = [c for c in ceil if c]
        if ceil and e != "sleep":
            marks[e] = max(ceil)
    out.append(svg.bar_chart("Throughput at each stack's best concurrency (median of repeats)", eps, names, values,
                             "requests / s", col, marks, width=wide))
    # 2. throughput vs concurrency per endpoint, knee circled, ceiling dashed
    lines_html = []
    for e in eps:
        lines, knees = {}, {}
        for s in stacks:
            ep = s["endpoints"].get(e)
            if ep:
                lines[s["name"]] = [(r["connections"], r.get("throughput_rps")) for r in ep["sweep"]]
                knees[s["name"]] = ep["knee_connections"]
        ceiling = [(c, results.ceiling_for(doc, e, c)) for c in doc["settings"]["concurrency"]]
        ceiling = [(c, v) for c, v in ceiling if v]
        # Little's law for /sleep grows 64x over the sweep and would flatten the stacks' lines: shown in the table only.
        lines_html.append(svg.line_chart(f"/{e}: throughput vs connections", lines, col, "requests / s", "connections (log scale)",
                                         knees, ceiling if e != "sleep" else None))
    out.append('<div class="charts">' + "".join(lines_html) + "</div>")
    # 2b. per-second throughput of the best run: is the rate steady, or does it drift or stall?
    steady_html = []
    for e in eps:
        lines = {}
        for s in stacks:
            ep = s["endpoints"].get(e)
            if ep:
                best = next((r for r in ep["sweep"] if r["connections"] == ep["headline"]["connections"]), None)
                series = (best or {}).get("per_second_rps") or []
                if len(series) >= 3:
                    lines[s["name"]] = list(enumerate(series, start=1))
        if lines:
            steady_html.append(svg.line_chart(f"/{e}: per-second throughput of the best run", lines, col, "requests / s",
                                              "second of the run", xlog=False, width=640, height=260))
    if steady_html:
        out.append('<div class="charts">' + "".join(steady_html) + "</div>")
    # 3. latency percentiles: open loop at the highest rate (coordinated-omission corrected)
    rate = max(doc["settings"]["open_rates"]) if doc["settings"]["open_rates"] else None
    if rate:
        lat_html = []
        for e in eps:
            vals = {}
            for s in stacks:
                ep = s["endpoints"].get(e)
                run = next((r for r in (ep or {}).get("open_loop", []) if r.get("fraction_of_peak") == rate
                            and r.get("latency_ms")), None)
                if run:
                    for p in ("p50", "p90", "p99", "p99.9", "max"):
                        vals[(p, s["name"])] = run["latency_ms"][p]
            chart = svg.bar_chart(f"/{e}: open-loop latency at {rate:.0%} of peak (ms, log scale)",
                                  ["p50", "p90", "p99", "p99.9", "max"], names, vals, "ms", col, log=True,
                                  width=640, height=300)
            lat_html.append(chart)
        out.append('<div class="charts">' + "".join(lat_html) + "</div>")
    # 4. CPU per request, 5. memory
    cpu, mem_peak = {}, {}
    for s in stacks:
        for e, ep in s["endpoints"].items():
            cpu[(e, s["name"])] = ep["headline"]["cpu_us_per_request"]["median"]
            peak, steady = report_md.memory_of(ep)
            mem_peak[(e, s["name"])] = peak / 2**20 if peak else None
    out.append(svg.bar_chart("Server CPU per request (whole process tree)", eps, names, cpu,
                             "CPU µs / request", col, width=wide))
    out.append(svg.bar_chart("Peak RSS of the server's process tree", eps, names, mem_peak,
                             "MiB", col, width=wide))
    return "\n".join(c for c in out if c)


def render(doc) -> str:
    md_head = report_md.render(doc).split("## Overview")[0]
    bullets = [line[2:] for line in md_head.splitlines() if line.startswith("- ")]
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>Benchmark {esc(doc['started'])}</title>"
             f"<style>{CSS}</style></head><body>",
             f"<h1>Benchmark report, {esc(doc['started'])}</h1>"]
    if not doc.get("complete"):
        parts.append('<p class="flag">This run did not complete: what follows is what it finished.</p>')
    parts.append("<ul>" + "".join(f"<li>{esc(b).replace('`', '')}</li>" for b in bullets) + "</ul>")
    parts.append("""<p class="note">How to read it: closed-loop numbers (wrk) are the most a stack serves at a given
number of connections; their latencies are optimistic, because a stalled server also stalls the client
(coordinated omission). Open-loop runs (oha, fixed arrival rate, latency measured from the intended send
time) show the latency a user arriving at that rate sees. A <span class="flag">flag</span> means the number is not
the server's alone: <b>generator-saturated</b> = the load generator ran out of CPU; <b>disturbed</b> = other
work on the machine took CPU during the run. "of ceiling" compares with what no stack can beat at the same
concurrency (nginx <code>return 200</code>, Little's law for /sleep, the backend's own benchmark tool).</p>""")
    parts.append("<h2>Overview</h2><p class='note'>Best closed-loop req/s per stack and endpoint (median of the repeats), "
                 "in brackets its share of the ceiling at the same concurrency; ⚑ = a flagged run.</p>"
                 + html_table(["stack"] + [f"/{e}" for e in report_md.endpoints(doc)], report_md.overview_rows(doc)))
    parts.append("<h2>Stacks</h2>" + html_table(["stack", "status", "detail"],
                 [[x["name"], x.get("status", "?"), x.get("reason") or
                   (f"verified ({x['verify']['passed']} checks)" if x.get("verify") else "")] for x in doc["stacks"]]))
    parts.append("<h2>Charts</h2>" + charts(doc))
    for e in report_md.endpoints(doc):
        parts.append(f"<h2>/{esc(e)}</h2>")
        rows = report_md.endpoint_rows(doc, e)
        if rows:
            parts.append(html_table(report_md.endpoint_header(doc), rows))
        sweep = report_md.sweep_rows(doc, e)
        if sweep:
            parts.append("<p class='note'>Throughput (req/s) by connections; ◆ marks the knee.</p>"
                         + html_table(["stack"] + [str(c) for c in doc["settings"]["concurrency"]], sweep))
    parts.append("<h2>Per stack</h2>")
    for x in report_md.benchmarked(doc):
        parts.append(f"<h3>{esc(x['name'])}</h3>" + html_table(report_md.stack_header(doc), report_md.stack_rows(doc, x)))
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
         "git": doc["git"], "services": doc["services"], "estimate": doc.get("estimate")}, indent=1)) + "</pre>")
    parts.append("<p class='note'>Raw tool output for every run: <code>raw/</code> beside this file; the data: "
                 "<code>results.json</code> (schema in loadtest/RESULTS.md).</p></body></html>")
    return "\n".join(parts)
