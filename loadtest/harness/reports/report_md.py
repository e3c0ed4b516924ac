"""report.md (and the terminal's summary table) from results.json: tables per endpoint, stacks side by side."""
from harness.accounting import stats
from harness.reports import results

FLAG_MEANING = {
    "generator-saturated": "the load generator used more than its threshold of its CPUs: the number is the client's limit, not the server's",
    "no-answers": "the stack answered no request during the run (stuck, crashed or far too slow): see raw/ and the stack's log",
    "behind-rate": "open loop: fewer than 90% of the requests offered at the fixed rate were answered within the run: the latencies describe an overloaded server (or client)",
    "disturbed": "other work on the machine (foreign CPU) exceeded its threshold during the run: the number is not trustworthy",
    "client-dropped": "multi-host: a client host gave no result for the run (named after the @); the figures are the other hosts', merged",
    "kept-alive": "churn profile: fewer connections ended than requests said `Connection: close`: the stack kept them open",
    "refusal-served": "noisy profile: fewer refusals (non-200 answers or closes) than refusal cases sent: some were served as valid",
    "valid-lost": "a profile's valid requests neither answered 200 nor in flight when the run ended",
    "stalled": "a profile's requests waited past the load generator's timeout, or wrk sent nothing for two whole seconds because nothing was answered (with pipelining: only part of a batch answered)",
}


def fmt_rps(v) -> str:
    return "–" if v is None else f"{v:,.0f}"


def fmt_ms(v) -> str:
    return "–" if v is None else (f"{v:.2f}" if v < 100 else f"{v:,.0f}")


def fmt_pct(v) -> str:
    return "–" if v is None else f"{v:.0%}"


def fmt_mib(v) -> str:
    return "–" if v is None else f"{v / 2**20:,.0f}"


BELOW_GOAL = "▼"  # marks a share of the bound under results.BOUND_GOAL (report.html colours the cell)


def fmt_share(sob: dict | None) -> str:
    """A share of the bound: ≤ when it is an upper estimate (/hello generator-saturated), ≥ when a
    lower one (the endpoint generator-saturated, or the backends' CPUs saturated), ? when both; ▼ under the goal."""
    if not sob or sob.get("share") is None:
        return "–"
    up, down = sob.get("bound_understated"), sob.get("data_understated") or sob.get("backends_saturated")
    prefix = "≤" if up and not down else "≥" if down and not up else ""
    text = prefix + f"{sob['share']:.0%}" + ("?" if up and down else "")
    return text + (f" {BELOW_GOAL}" if sob.get("below_goal") else "")


def fmt_eff(v) -> str:
    return "–" if v is None else (f"{v:,.0f}" if v >= 100 else f"{v:.3g}")


DEVIATION_MARK = "†"  # a stack verified with known deviations its manifest declares (listed in the report)
OBSERVED_MEANING = {"close": "closes the connection without an answer",
                    "no answer": "neither answers nor closes the connection"}


def deviations_of(x: dict) -> list[dict]:
    """The declared deviations a stack's verification showed (results.json: verify.deviations)."""
    return (x.get("verify") or {}).get("deviations") or []


def stack_name(x: dict) -> str:
    """A stack's name in a table: marked when it was verified with known deviations."""
    return x["name"] + (f" {DEVIATION_MARK}" if deviations_of(x) else "")


def observed_text(observed: str) -> str:
    if observed in OBSERVED_MEANING:
        return OBSERVED_MEANING[observed]
    status, _, keeps = observed.partition(" ")
    return f"answers {status}, then " + ("keeps the connection open" if keeps else "closes the connection")


def verify_detail(x: dict) -> str:
    v = x.get("verify")
    if not v:
        return ""
    known = deviations_of(x)
    checks = sorted({d["check"] for d in known})
    return (f"verified ({v['passed']} checks passed" + (
        f", {len(checks)} with {len(known)} known deviation{'s' if len(known) != 1 else ''} {DEVIATION_MARK}"
        if known else "") + ")")


DEVIATIONS_TEXT = (f"{DEVIATION_MARK} = verified with known deviations: protocol-hygiene cases the stack's framework "
                   "answers otherwise whatever its settings, declared in the stack's `stack.toml` with their upstream "
                   "bug, and seen during its verification exactly as declared (any other failure would have kept it "
                   "out of the benchmark). They are not passes:")


def deviation_items(doc) -> list[tuple[str, list[dict]]]:
    """(stack name, its deviations) for every stack in the run that has some."""
    return [(x["name"], deviations_of(x)) for x in doc["stacks"] if deviations_of(x)]


def deviation_lines(doc) -> list[str]:
    out = []
    for name, known in deviation_items(doc):
        out.append(f"- **{name}** {DEVIATION_MARK}, {len(known)} known deviation{'s' if len(known) != 1 else ''}:")
        out += [f"  - {d['check']}: *{d['case']}*: {observed_text(d['observed'])} ({d['observed']}). "
                f"{d['why']} Upstream: {d['upstream']}" for d in known]
    return [DEVIATIONS_TEXT, "", *out, ""] if out else []


def benchmarked(doc) -> list[dict]:
    return [s for s in doc["stacks"] if s.get("endpoints") or s.get("profiles")]


def endpoints(doc) -> list[str]:
    return doc["settings"]["endpoints"]


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def memory_of(ep: dict) -> tuple:
    runs = ep["sweep"] + ep["repeats"] + ep["open_loop"]
    peaks = [r["stats"]["memory"]["peak_rss_bytes"] for r in runs if r.get("stats", {}).get("memory", {}).get("peak_rss_bytes")]
    headline_c = ep["headline"]["connections"]
    steady = [r["stats"]["memory"]["steady_rss_bytes"] for r in ep["sweep"] + ep["repeats"]
              if r["connections"] == headline_c and r.get("stats", {}).get("memory", {}).get("steady_rss_bytes")]
    return (max(peaks) if peaks else None, stats.median(steady))


def measured_cells(doc, s: dict, endpoint: str) -> list[str] | None:
    """One stack on one endpoint: the cells after the first column of both the per-endpoint and the
    per-stack tables (their headers come from measured_header)."""
    ep = s["endpoints"].get(endpoint)
    if not ep:
        return None
    h = ep["headline"]
    t = h["throughput_rps"]
    ceiling = results.ceiling_for(doc, endpoint, h["connections"])
    peak_mem, steady_mem = memory_of(ep)
    opens = []
    for frac in doc["settings"]["open_rates"]:
        run = next((r for r in ep["open_loop"] if r.get("fraction_of_peak") == frac and r.get("latency_ms")), None)
        opens.append(fmt_ms(run["latency_ms"]["p99"]) if run else "–")
    spread = f" (±{t['spread_pct'] / 2:.0f}%, n={t['n']})" if t["n"] > 1 and t["spread_pct"] is not None else ""
    best = next(r for r in ep["sweep"] if r["connections"] == h["connections"])
    errors = sum(sum((r.get("errors") or {}).values()) for r in ep["sweep"] + ep["repeats"])
    return [fmt_rps(t["median"]) + spread, h["connections"], ep["knee_connections"],
            fmt_pct(results.ratio(t["median"], ceiling)), fmt_share(ep.get("share_of_bound")), fmt_ms(best["latency_ms"]["p99"]) if best.get("latency_ms") else "–",
            *opens, fmt_rps(h["cpu_us_per_request"]["median"]), fmt_mib(peak_mem), fmt_mib(steady_mem),
            f"{errors:,}", ", ".join(h["flags"]) or "ok"]


def measured_header(doc) -> list[str]:
    return (["req/s (median)", "at conns", "knee", "of ceiling", "of bound", "closed p99 ms"]
            + [f"open {r:.0%} p99 ms" for r in doc["settings"]["open_rates"]]
            + ["CPU µs/req", "peak RSS MiB", "steady RSS MiB", "errors", "flags"])


def endpoint_rows(doc, endpoint: str) -> list[list[str]]:
    rows = []
    for s in benchmarked(doc):
        cells = measured_cells(doc, s, endpoint)
        if cells:
            rows.append([stack_name(s), *cells])
    return rows


def stack_rows(doc, s: dict) -> list[list[str]]:
    """One stack, every endpoint: the table a stack's README quotes."""
    rows = []
    for endpoint in endpoints(doc):
        cells = measured_cells(doc, s, endpoint)
        if cells:
            by_c = {r["connections"]: r.get("throughput_rps") for r in s["endpoints"][endpoint]["sweep"]}
            sweep = " / ".join(fmt_rps(by_c.get(c)) for c in doc["settings"]["concurrency"])
            rows.append([f"/{endpoint}", *cells, sweep])
    return rows


def stack_header(doc) -> list[str]:
    levels = " / ".join(str(c) for c in doc["settings"]["concurrency"])
    return ["endpoint", *measured_header(doc), f"req/s at {levels} conns"]


def endpoint_header(doc) -> list[str]:
    return ["stack", *measured_header(doc)]


def sweep_rows(doc, endpoint: str) -> list[list[str]]:
    rows = []
    levels = doc["settings"]["concurrency"]
    ceil = [results.ceiling_for(doc, endpoint, c) for c in levels]
    if any(ceil):
        rows.append(["*ceiling*"] + [fmt_rps(v) for v in ceil])
    for s in benchmarked(doc):
        ep = s["endpoints"].get(endpoint)
        if ep:
            by_c = {r["connections"]: r.get("throughput_rps") for r in ep["sweep"]}
            rows.append([stack_name(s)] + [fmt_rps(by_c.get(c)) + (" ◆" if c == ep["knee_connections"] else "")
                                       for c in levels])
    return rows


def harness_cpu(doc) -> dict:
    shares = [r["stats"]["harness_cpu_share"] for s in benchmarked(doc) for ep in s["endpoints"].values()
              for r in ep["sweep"] + ep["repeats"] + ep["open_loop"] if r.get("stats", {}).get("harness_cpu_share") is not None]
    foreign = [r["stats"]["foreign_cpu_share"] for s in benchmarked(doc) for ep in s["endpoints"].values()
               for r in ep["sweep"] + ep["repeats"] + ep["open_loop"] if r.get("stats", {}).get("foreign_cpu_share") is not None]
    gen = [r["stats"]["generator_cpu_share"] for s in benchmarked(doc) for ep in s["endpoints"].values()
           for r in ep["sweep"] + ep["repeats"] + ep["open_loop"] if r.get("stats", {}).get("generator_cpu_share") is not None]
    return {"harness_max": max(shares) if shares else None,
            "harness_median": stats.median(shares),
            "foreign_median": stats.median(foreign),
            "foreign_max": max(foreign) if foreign else None,
            "generator_max": max(gen) if gen else None}


def overview_rows(doc) -> list[list[str]]:
    """Stacks x endpoints: the headline median, its share of the ceiling, and a mark when flagged."""
    rows = []
    for x in benchmarked(doc):
        row = [stack_name(x)]
        for e in endpoints(doc):
            ep = x["endpoints"].get(e)
            if not ep:
                row.append("–")
                continue
            h = ep["headline"]
            med = h["throughput_rps"]["median"]
            r = results.ratio(med, results.ceiling_for(doc, e, h["connections"]))
            row.append(fmt_rps(med) + (f" ({r:.0%})" if r is not None else "") + (" ⚑" if h["flags"] else ""))
        rows.append(row)
    return rows


SHARE_OF_BOUND_TEXT = (
    "**Share of the bound** (data endpoints): on one server CPU a data request costs at least the stack's own "
    "HTTP work, what its `/hello` costs, plus the backend client's work, at best what the backend's own benchmark "
    "tool costs. So the most a stack can serve is bound = 1 / (1/hello + 1/ceiling), where hello = the stack's "
    "`/hello` headline in this run (median req/s at its best concurrency), ceiling = the backend tool's ceiling at the "
    "connections of the endpoint's headline, measured again right after the headline runs (else the one of the "
    "run's start, shown in brackets when both exist), and share = data / bound with data = the endpoint's "
    f"headline. {BELOW_GOAL} = under the goal of {results.BOUND_GOAL:.0%}. ≤: `/hello` was generator-saturated, "
    "so the true bound is higher and the share at most this; ≥: the endpoint itself was, or the backends' CPUs were "
    f"at least {results.BACKENDS_SATURATED:.0%} busy (the backend, sharing them with the load generator, set the pace; "
    "the ceiling tools had them to the backend alone), so the share is at least this; –: a figure is missing (`/hello` not run, no ceiling at that concurrency, no answers).")

EFFICIENCY_TEXT = (
    "**Efficiency** (from the headline runs): requests per CPU-second = 1e6 / the server's CPU µs per request "
    "(its whole process tree, median of the headline runs); req/s per MiB = the headline req/s / the largest RSS "
    "of the tree during those runs. Higher is better for both.")


def bound_matrix(doc) -> tuple[list[str], list[list[str]]]:
    """Stacks x data endpoints: the share of the bound (header, rows)."""
    eps = [e for e in endpoints(doc) if e in results.DATA_ENDPOINTS]
    rows = [[stack_name(x)] + [fmt_share((x["endpoints"].get(e) or {}).get("share_of_bound")) for e in eps]
            for x in benchmarked(doc)]
    return ["stack"] + [f"/{e}" for e in eps], (rows if eps else [])


def bound_rows(doc) -> tuple[list[str], list[list[str]]]:
    """Every figure behind each share of the bound, one row per stack and data endpoint (header, rows)."""
    rows = []
    for x in benchmarked(doc):
        for e in endpoints(doc):
            sob = (x["endpoints"].get(e) or {}).get("share_of_bound")
            if sob:
                rows.append([stack_name(x), f"/{e}", fmt_rps(sob["hello_rps"]) + (" ⚑" if sob["bound_understated"] else ""),
                             fmt_ceiling(sob), fmt_rps(sob["bound_rps"]),
                             fmt_rps(sob["data_rps"]) + (" ⚑" if sob["data_understated"] else ""),
                             fmt_busy(sob.get("backends_busy")) + (" ⚑" if sob.get("backends_saturated") else ""),
                             fmt_share(sob)])
    return ["stack", "endpoint", "/hello req/s", "ceiling req/s at conns", "bound req/s", "req/s",
            "backend CPU busy", "share"], rows


def fmt_ceiling(sob: dict) -> str:
    """The ceiling a share used, at its connections; the run's start's in brackets when it used another."""
    text = f"{fmt_rps(sob['ceiling_rps'])} at {sob['ceiling_connections']}"
    if sob.get("ceiling_source") == "adjacent" and sob.get("start_ceiling_rps"):
        text += f" (start {fmt_rps(sob['start_ceiling_rps'])})"
    return text


def fmt_busy(v) -> str:
    return "–" if v is None else f"{v:.0%}"


def efficiency_matrix(doc, figure: str) -> tuple[list[str], list[list[str]]]:
    """Stacks x endpoints: one figure of results.efficiency (header, rows)."""
    rows = [[stack_name(x)] + [fmt_eff(((x["endpoints"].get(e) or {}).get("efficiency") or {}).get(figure))
                           for e in endpoints(doc)] for x in benchmarked(doc)]
    return ["stack"] + [f"/{e}" for e in endpoints(doc)], rows


def hosts_tables(doc) -> list[tuple[str, list[str], list[list[str]]]]:
    """A multi-host run's hosts, the network between them, and each endpoint's headline run per
    client host: (title, header, rows) for the Markdown and the HTML report alike."""
    hosts = doc.get("hosts") or {}
    if not hosts:
        return []
    machines = [[role, h["destination"], h["address"],
                 f"{h['machine'].get('cpu_model')}, {h['machine'].get('cpus_usable')} CPUs, "
                 f"{(h['machine'].get('memory_bytes') or 0) / 2**30:.1f} GiB, kernel {h['machine'].get('kernel')}",
                 h["machine"].get("hostname", "?"), "shared" if h.get("shares_checkout") else "copied"]
                for role, h in hosts.items()]
    out = [("Hosts", ["role", "destination", "address", "machine", "hostname", "checkout"], machines)]
    net = doc.get("network") or {}
    rows = [[k, v.get("to", ""), f"{v['median_ms']:.3f}", f"{v['min_ms']:.3f}–{v['max_ms']:.3f}"]
            for k, v in (net.get("rtt") or {}).items()]
    bw = net.get("bandwidth") or {}
    if bw.get("gbit_per_s"):
        rows.append([f"{bw['from']}->{bw['to']}", bw["tool"], f"{bw['gbit_per_s']:.2f} Gbit/s", f"{bw['seconds']} s"])
    if rows:
        out.append(("Network", ["between", "measured", "round trip ms (median) / bandwidth", "range / time"], rows))
    per_host = []
    for x in benchmarked(doc):
        for endpoint, ep in (x.get("endpoints") or {}).items():
            head = ep.get("headline", {}).get("connections")
            run = next((r for r in ep.get("sweep", []) if r.get("connections") == head), None)
            for h in (run or {}).get("per_host", []):
                st = h.get("stats") or {}
                per_host.append([x["name"], f"/{endpoint}", h["host"], str(h.get("connections", "")),
                                 fmt_rps(h.get("throughput_rps")), fmt_ms((h.get("latency_ms") or {}).get("p99")),
                                 fmt_pct(st.get("generator_cpu_share")), fmt_pct(st.get("foreign_cpu_share")),
                                 h.get("dropped", "")])
    if per_host:
        out.append(("Per client host (each endpoint's headline level)",
                    ["stack", "endpoint", "client", "conns", "req/s", "p99 ms", "generator CPU", "foreign CPU", "dropped"],
                    per_host))
    return out


QUICK_MARK = "QUICK pass: not comparable with whole runs"
QUICK_WARNING = (
    "QUICK pass: NOT COMPARABLE. One-second runs after one to three seconds of warm-up measure the JIT compilers "
    "and the warm-up more than the stacks: the JVM stacks read several times slower than in a whole run, and their "
    "order can change. Use a QUICK pass to see that everything builds, verifies and runs; quote only a whole "
    "make bench-all.")


def quick_marked(text: str) -> str:
    """Every table of a QUICK pass's report.md opens with the mark, so that none can be quoted alone."""
    out, previous = [], ""
    for line in text.split("\n"):
        if line.startswith("| ") and not previous.startswith("|"):
            out += [f"*{QUICK_MARK}:*", ""] if previous == "" else ["", f"*{QUICK_MARK}:*", ""]
        out.append(line)
        previous = line
    return "\n".join(out)


def render(doc) -> str:
    text = _render(doc)
    return quick_marked(text) if doc["settings"].get("quick") else text


def _render(doc) -> str:
    m, s, lay = doc["machine"], doc["settings"], doc["cpu_layout"]
    h = harness_cpu(doc)
    open_loop = (f"open loop at {', '.join(f'{r:.0%}' for r in s['open_rates'])} of it for {s['open_duration']:g} s"
                 if s["open_rates"] else "no open loop")
    out = [f"# Benchmark report, {doc['started']}", ""]
    if not doc.get("complete"):
        out += ["**This run did not complete**: what follows is what it finished.", ""]
    if s["quick"]:
        out += [f"**{QUICK_WARNING}**", ""]
    out += [
        f"- machine: {m['cpu_model']}, {m['cpus']} CPUs, {m['memory_bytes'] / 2**30:.1f} GiB, {m['os']}, kernel {m['kernel']}",
        f"- commit: `{doc['git']['commit']}`{' (with uncommitted changes)' if doc['git']['dirty'] else ''} on {doc['git']['branch']}",
        (f"- hosts: " + ", ".join(f"{role} `{h['destination']}` ({h['address']})" for role, h in doc["hosts"].items())
         + " (each role has its host's every CPU; see Hosts)" if doc.get("hosts") else
         f"- CPU layout ({lay['source']}): server `{lay['server']}`, load generator `{lay['loadgen']}`, backends `{lay['backends']}`"),
        f"- settings: {'QUICK pass, ' if s['quick'] else ''}concurrency {s['concurrency']}, {s['duration']:g} s per level, "
        f"{s['repeats']} run(s) of the best level (median), {open_loop}, warm-up {s['warmup_min']:g}–{s['warmup_max']:g} s",
        *([f"- MariaDB thread handling: `{doc['mysql_thread_handling']}`"] if doc.get("mysql_thread_handling") else []),
        f"- limits: nofile {doc['limits']['nofile_soft']}, somaxconn {doc['limits']['somaxconn']}; "
        f"load average {doc.get('loadavg_start')} at start, {doc.get('loadavg_end')} at end",
        f"- duration: {doc.get('duration_s', 0) / 60:.1f} min",
        f"- the harness's own CPU while load ran: median {fmt_pct(h['harness_median'])}, max {fmt_pct(h['harness_max'])} of the machine; "
        f"foreign CPU (other work on the box): median {fmt_pct(h['foreign_median'])}, max {fmt_pct(h['foreign_max'])}",
        "",
        "## Overview", "",
        "Best closed-loop req/s per stack and endpoint (median of the repeats), in brackets its share of the "
        "ceiling at the same concurrency; ⚑ = a flagged run (see Flags)"
        + (f"; {DEVIATION_MARK} = verified with known deviations (below)." if deviation_items(doc) else "."), "",
        table(["stack"] + [f"/{e}" for e in endpoints(doc)], overview_rows(doc)), "",
    ]
    out += deviation_lines(doc)
    header, rows = bound_matrix(doc)
    if rows:
        out += ["## Share of the bound", "", SHARE_OF_BOUND_TEXT, "", table(header, rows), "",
                table(*bound_rows(doc)), ""]
    out += ["## Efficiency", "", EFFICIENCY_TEXT, "", "Requests per CPU-second:", "",
            table(*efficiency_matrix(doc, "requests_per_cpu_second")), "", "req/s per MiB of peak RSS:", "",
            table(*efficiency_matrix(doc, "rps_per_mib_peak_rss")), ""]
    out += [
        "## Stacks", "",
        table(["stack", "status", "detail"],
              [[stack_name(x), x.get("status", "?"), x.get("reason") or verify_detail(x)] for x in doc["stacks"]]),
        "",
    ]
    for title, header, rows in hosts_tables(doc):
        out += [f"## {title}", "", table(header, rows), ""]
    for endpoint in endpoints(doc):
        rows = endpoint_rows(doc, endpoint)
        out += [f"## /{endpoint}", ""]
        if rows:
            out += [table(endpoint_header(doc), rows), ""]
        sweep = sweep_rows(doc, endpoint)
        if sweep:
            out += ["Throughput (req/s) by connections; ◆ marks the knee (fewest connections reaching 90% of the peak):", "",
                    table(["stack"] + [str(c) for c in s["concurrency"]], sweep), ""]
    for name in profile_names(doc):
        out += [f"## Profile: {name}", "", f"{profile_about(doc, name)}; ⚑ flags as in Flags below.", "",
                table(PROFILE_HEADER, profile_rows(doc, name)), ""]
    out += ["## Per stack", "",
            "Each stack's own row from every endpoint table above, for quoting in its README.", ""]
    for x in benchmarked(doc):
        out += [f"### {stack_name(x)}", "", f"{x.get('framework', '')}; {x.get('status', '?')}", "",
                table(stack_header(doc), stack_rows(doc, x)), ""]
        if known := deviations_of(x):
            out += [f"{DEVIATION_MARK} Verified with {len(known)} known deviation{'s' if len(known) != 1 else ''}: "
                    + "; ".join(f"*{d['case']}* {d['observed']} ({d['upstream']})" for d in known), ""]
    out += ["## Ceilings", "",
            table(["endpoint", "conns", "req/s", "how"],
                  [[c["endpoint"], c["connections"], fmt_rps(c.get("throughput_rps")),
                    f"{c['tool']}: {c.get('method', '')}"[:160]] for c in doc["ceilings"]]), "",
            "## Flags", ""] + [f"- **{k}**: {v}" for k, v in FLAG_MEANING.items()] + [
            "", "## Versions", "",
            table(["what", "version"], [[k, v] for k, v in doc["tools"].items()] +
                  [[f"{x['name']}: {k}", v] for x in doc["stacks"] for k, v in (x.get("versions") or {}).items()]),
            "", "Raw tool output for every run is in `raw/`, the generated load scripts in `scripts/`.", ""]
    return "\n".join(out)


def profile_names(doc) -> list[str]:
    return list(dict.fromkeys(n for x in benchmarked(doc) for n in x.get("profiles") or {}))


def profile_about(doc, name: str) -> str:
    about = next(x["profiles"][name]["about"] for x in benchmarked(doc) if name in (x.get("profiles") or {}))
    return about[:1].upper() + about[1:]


def profile_figure(rec: dict, clean: float | None) -> str:
    """The profile's own figure: connections for churn, valid answers for noisy (against the clean sweep)."""
    if "connections_per_s" in rec:
        cpu = rec.get("cpu_us_per_connection")
        return f"{fmt_rps(rec['connections_per_s'])} conn/s" + (f", {cpu} µs CPU/conn" if cpu else "")
    if "valid_rps" in rec:
        vs = f" ({rec['valid_rps'] / clean:.0%} of the clean run)" if clean and rec.get("valid_rps") else ""
        return f"{fmt_rps(rec['valid_rps'])} valid/s{vs}"
    return "–"


def profile_rows(doc, name: str) -> list[list[str]]:
    rows = []
    for x in benchmarked(doc):
        for rec in ((x.get("profiles") or {}).get(name) or {}).get("runs", []):
            ep = (x.get("endpoints") or {}).get(rec["endpoint"])
            clean = ep["headline"]["throughput_rps"]["median"] if ep else None
            errors = rec.get("errors") or {}
            lat = rec.get("latency_ms") or {}
            # wrk's p99 of 0 with a non-zero maximum is its own loss (pipelined runs before they recorded none)
            p99 = lat.get("p99") if lat.get("p99") or not lat.get("max") else None
            rows.append([stack_name(x), rec["profile_run"], fmt_rps(rec.get("throughput_rps")),
                         profile_figure(rec, clean), fmt_ms(p99),
                         str(rec.get("cpu_us_per_request") or "–"),
                         f"{errors.get('connect', 0)}/{errors.get('read', 0)}/{errors.get('timeout', 0)}",
                         str(rec.get("valid_lost", "–")), " ".join(rec.get("flags") or []) or "–"])
    return rows


PROFILE_HEADER = ["stack", "run", "req/s", "figure", "p99 ms", "CPU µs/req", "errors conn/read/timeout",
                  "valid lost", "flags"]


def summary_table(doc) -> str:
    eps = endpoints(doc)
    rows = []
    for x in doc["stacks"]:
        if not x.get("endpoints") and x.get("profiles"):
            runs = [r for p in x["profiles"].values() for r in p["runs"]]
            flagged = sum(1 for r in runs if r.get("flags"))
            rows.append(f"  {stack_name(x):14} profiles only: {len(runs)} runs ({flagged} flagged), see the report")
            continue
        if not x.get("endpoints"):
            rows.append(f"  {x['name']:14} {x.get('status', '?')}: {x.get('reason', '')}")
            continue
        cells = []
        for e in eps:
            ep = x["endpoints"].get(e)
            if not ep:
                cells.append(f"{'–':>14}")
                continue
            med = ep["headline"]["throughput_rps"]["median"]
            flag = "!" if ep["headline"]["flags"] else " "
            cells.append(f"{fmt_rps(med):>13}{flag}")
        rows.append(f"  {stack_name(x):14} " + " ".join(cells))
    head = "  " + f"{'req/s (median)':14} " + " ".join(f"{e:>14}" for e in eps)
    marked = deviation_items(doc)
    legend = (f", {DEVIATION_MARK} = verified with known deviations: "
              + "; ".join(f"{n}: {len(k)} case{'s' if len(k) != 1 else ''}" for n, k in marked)) if marked else ""
    quick = f"\n{QUICK_MARK.upper()}" if doc["settings"].get("quick") else ""
    return f"\nsummary (! = flagged run{legend}; see report):{quick}\n" + head + "\n" + "\n".join(rows)
