"""Rendering the reports from a recorded results.json: every section present, and the HTML self-contained;
the figures derived for them (share of the bound, efficiency) and the latency curves."""
import json
import pathlib
import re
import shutil
from html import unescape

import pytest

from harness.bench import run
from harness.reports import report_html, report_md, results

FIX = pathlib.Path(__file__).with_name("fixtures")


def test_reports_render_from_a_recorded_results_json(tmp_path):
    shutil.copy(FIX / "results-sample.json", tmp_path / "results.json")
    run.render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    doc = results.read(tmp_path)
    for endpoint in doc["settings"]["endpoints"]:
        assert f"## /{endpoint}" in md and f"<h2>/{endpoint}</h2>" in html
    assert "of ceiling" in md and "knee" in md
    assert html.count("<svg") >= 4
    assert_charts_plot_the_figures(doc, html)
    # self-contained: nothing fetched from anywhere when opened offline (a link, <a href>, fetches nothing)
    assert not re.search(r'<(?!a\s)[^>]*\b(src|href)=["\']?https?:', html)
    assert "<script" not in html and "<link" not in html
    for stack in doc["stacks"]:
        assert stack["name"] in html
    # each benchmarked stack has its own table, every endpoint in it (what its README quotes)
    per_stack = md.split("## Per stack")[1].split("## Ceilings")[0]
    for stack in report_md.benchmarked(doc):
        section = per_stack.split(f"### {stack['name']}\n")[1].split("###")[0]
        for endpoint in stack["endpoints"]:
            assert f"| /{endpoint} |" in section


def test_an_unavailable_or_failed_stack_is_listed_with_its_reason(tmp_path):
    doc = json.loads((FIX / "results-sample.json").read_text())
    doc["stacks"].append({"name": "php-swoole", "status": "unavailable", "reason": "ext-swoole not loaded"})
    doc["stacks"].append({"name": "broken", "status": "failed", "reason": "verification: golden responses: 3 of 70 failed"})
    md = report_md.render(doc)
    assert "| php-swoole | unavailable | ext-swoole not loaded |" in md
    assert "| broken | failed | verification: golden responses" in md
    assert "php-swoole" in report_md.summary_table(doc)


@pytest.fixture
def with_deviations():
    """results-three-stacks.json with php-fpm's verify entry replaced by one with three declared
    deviations (fixtures/verify-deviations.json)."""
    doc = json.loads((FIX / "results-three-stacks.json").read_text())
    for name, entry in json.loads((FIX / "verify-deviations.json").read_text()).items():
        next(x for x in doc["stacks"] if x["name"] == name)["verify"] = entry
    return doc


def test_a_stack_verified_with_known_deviations_is_marked_next_to_its_figures_and_its_deviations_listed(
        tmp_path, with_deviations):
    (tmp_path / "results.json").write_text(json.dumps(with_deviations))
    run.render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    overview = md.split("## Overview")[1].split("## Share of the bound")[0]
    assert "| php-fpm † | " in overview and "| node-cluster | " in overview and "| java-netty | " in overview
    assert "† = verified with known deviations (below)" in overview
    assert "- **php-fpm** †, 3 known deviations:" in overview
    assert ("  - framing (RFC 9112: 400 and close): *Content-Length: 1.5*: answers 408, then closes the connection "
            "(408). Swoole's reactor frames the body with strtoull() before llhttp sees the head Upstream: "
            "https://github.com/swoole/swoole-src/pull/2062") in overview, overview
    assert overview.count("  - sizes (served to 8 KiB; 414 and 431 beyond the limits): *a ") == 2
    # every table that names the stack marks it; never as passed: the count excludes the deviated checks
    for section in ("## Share of the bound", "## Efficiency", "## /hello", "## /redis"):
        assert "| php-fpm † |" in md.split(section)[1].split("\n## ")[0], section
    assert "| php-fpm † | benchmarked | verified (24 checks passed, 2 with 3 known deviations †) |" in md
    assert "### php-fpm †\n" in md and "† Verified with 3 known deviations: *a request line of 64 KiB* 400" in md
    assert "node-cluster †" not in md and "java-netty †" not in md
    assert "† = verified with known deviations: php-fpm: 3 cases" in report_md.summary_table(with_deviations)
    assert "  php-fpm †" in report_md.summary_table(with_deviations)
    # the HTML: the same marker and list, the upstream bug a link
    assert html.count("php-fpm †") >= 8, html.count("php-fpm †")
    assert '<li><b>php-fpm</b> †, 3 known deviations:<ul><li>sizes' in html
    assert 'Upstream: <a href="https://github.com/swoole/swoole-src/pull/2062">' in html
    assert "verified (24 checks passed, 2 with 3 known deviations †)" in html


def test_a_results_json_without_deviations_marks_nothing(tmp_path):
    doc = json.loads((FIX / "results-three-stacks.json").read_text())
    md, html = report_md.render(doc), report_html.render(doc)
    assert "†" not in md and "†" not in html and "†" not in report_md.summary_table(doc)
    assert "| php-fpm | benchmarked | verified (26 checks passed) |" in md


def test_a_results_json_of_another_schema_version_is_refused(tmp_path):
    doc = json.loads((FIX / "results-sample.json").read_text())
    doc["schema_version"] = 999
    (tmp_path / "results.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="schema_version 999"):
        results.read(tmp_path)


# ---------------------------------------------------------------- share of the bound, efficiency

def endpoint(rps, cpu_us=100.0, connections=256, flags=(), peaks=(100 * 2**20,), other_peak=None):
    """An endpoint of a stack as results.json holds it: headline, its sweep run and a repeat."""
    def run(c, peak):
        return {"connections": c, "stats": {"memory": {"peak_rss_bytes": peak}}}
    sweep = [run(connections, peaks[0])] + ([run(16, other_peak)] if other_peak else [])
    return {"headline": {"connections": connections, "flags": list(flags),
                         "throughput_rps": {"median": rps}, "cpu_us_per_request": {"median": cpu_us}},
            "sweep": sweep, "repeats": [run(connections, p) for p in peaks[1:]], "open_loop": []}


def doc_with(endpoints: dict, ceilings=(("redis", 256, 30000.0),)) -> dict:
    return {"ceilings": [{"endpoint": e, "connections": c, "throughput_rps": v} for e, c, v in ceilings],
            "stacks": [{"name": "s", "endpoints": endpoints}]}


def test_share_of_bound_is_data_over_one_over_the_sum_of_the_costs():
    doc = results.derive(doc_with({"hello": endpoint(60000.0), "redis": endpoint(16000.0)}))
    sob = doc["stacks"][0]["endpoints"]["redis"]["share_of_bound"]
    # bound = 1 / (1/60000 + 1/30000) = 20000 req/s
    assert sob["bound_rps"] == 20000.0 and sob["share"] == 0.8
    assert sob["hello_rps"] == 60000.0 and sob["ceiling_rps"] == 30000.0 and sob["ceiling_connections"] == 256
    assert sob["below_goal"] is False and sob["missing"] == []
    assert not sob["bound_understated"] and not sob["data_understated"]
    assert "share_of_bound" not in doc["stacks"][0]["endpoints"]["hello"]
    assert "1 / (1/hello + 1/ceiling)" in doc["definitions"]["share_of_bound"]


def test_the_ceiling_is_the_one_at_the_endpoints_headline_concurrency():
    doc = results.derive(doc_with({"hello": endpoint(60000.0), "redis": endpoint(10000.0, connections=64)},
                                  ceilings=[("redis", 256, 30000.0), ("redis", 64, 60000.0)]))
    sob = doc["stacks"][0]["endpoints"]["redis"]["share_of_bound"]
    assert sob["ceiling_rps"] == 60000.0 and sob["bound_rps"] == 30000.0
    assert sob["share"] == pytest.approx(0.333, abs=0.001) and sob["below_goal"] is True


def test_the_ceiling_measured_beside_the_headline_runs_is_the_one_the_share_uses():
    redis = endpoint(16000.0)
    redis["adjacent_ceiling"] = {"endpoint": "redis", "connections": 256, "throughput_rps": 20000.0}
    doc = results.derive(doc_with({"hello": endpoint(60000.0), "redis": redis}))
    sob = doc["stacks"][0]["endpoints"]["redis"]["share_of_bound"]
    # bound = 1 / (1/60000 + 1/20000) = 15,000: the start's 30,000 would have given 20,000 and 80 %
    assert sob["ceiling_rps"] == 20000.0 and sob["ceiling_source"] == "adjacent"
    assert sob["start_ceiling_rps"] == 30000.0
    assert sob["bound_rps"] == 15000.0 and sob["share"] == pytest.approx(1.067, abs=0.001)
    assert report_md.fmt_ceiling(sob) == "20,000 at 256 (start 30,000)"
    # a failed tool beside the runs: the start's ceiling, said so
    redis["adjacent_ceiling"]["throughput_rps"] = None
    sob = results.derive(doc)["stacks"][0]["endpoints"]["redis"]["share_of_bound"]
    assert sob["ceiling_rps"] == 30000.0 and sob["ceiling_source"] == "start" and sob["share"] == 0.8
    assert report_md.fmt_ceiling(sob) == "30,000 at 256"
    # results.json from before the adjacent ceiling reads the same way
    del redis["adjacent_ceiling"]
    sob = results.derive(doc)["stacks"][0]["endpoints"]["redis"]["share_of_bound"]
    assert sob["ceiling_source"] == "start" and sob["share"] == 0.8


@pytest.mark.parametrize("endpoints, ceilings, missing", [
    ({"redis": endpoint(16000.0)}, [("redis", 256, 30000.0)], ["hello"]),  # /hello not benchmarked
    ({"hello": endpoint(60000.0), "redis": endpoint(16000.0)}, [("redis", 64, 30000.0)], ["ceiling"]),  # not at 256
    ({"hello": endpoint(60000.0), "redis": endpoint(16000.0)}, [("redis", 256, None)], ["ceiling"]),  # tool failed
    ({"hello": endpoint(60000.0), "redis": endpoint(None)}, [("redis", 256, 30000.0)], ["data"]),  # no answers
])
def test_a_missing_figure_leaves_the_share_missing_and_says_which(endpoints, ceilings, missing):
    sob = results.derive(doc_with(endpoints, ceilings))["stacks"][0]["endpoints"]["redis"]["share_of_bound"]
    assert sob["share"] is None and sob["bound_rps"] is None and sob["below_goal"] is None
    assert sob["missing"] == missing
    assert report_md.fmt_share(sob) == "–"


def test_a_generator_saturated_hello_makes_the_share_an_upper_estimate():
    # the measured /hello is the client's limit: the true bound is higher, the true share lower
    doc = results.derive(doc_with({"hello": endpoint(60000.0, flags=["generator-saturated"]),
                                   "redis": endpoint(16000.0)}))
    sob = doc["stacks"][0]["endpoints"]["redis"]["share_of_bound"]
    assert sob["bound_understated"] and not sob["data_understated"]
    assert report_md.fmt_share(sob) == "≤80%"
    doc = results.derive(doc_with({"hello": endpoint(60000.0), "redis": endpoint(13000.0, flags=["generator-saturated"])}))
    sob = doc["stacks"][0]["endpoints"]["redis"]["share_of_bound"]
    assert sob["data_understated"] and report_md.fmt_share(sob) == f"≥65% {report_md.BELOW_GOAL}"


def busy_endpoint(rps, busy_per_run, connections=16):
    ep = endpoint(rps, connections=connections, peaks=(100 * 2**20,) * len(busy_per_run))
    for run, busy in zip(ep["sweep"] + ep["repeats"], busy_per_run):
        run["stats"]["per_cpu_busy"] = busy
    return ep


def test_saturated_backend_cpus_make_the_share_a_lower_estimate():
    layout = {"server": "0", "loadgen": "1", "backends": "1"}
    ceilings = (("mysql", 16, 20000.0),)
    # three headline runs with CPU 1 at 97-99 %: the backend set the pace
    doc = doc_with({"hello": endpoint(100000.0),
                    "mysql": busy_endpoint(11000.0, [{"0": 0.75, "1": 0.99}, {"0": 0.7, "1": 0.97}, {"0": 0.7, "1": 0.98}])},
                   ceilings)
    doc["cpu_layout"] = layout
    sob = results.derive(doc)["stacks"][0]["endpoints"]["mysql"]["share_of_bound"]
    assert sob["backends_busy"] == 0.98 and sob["backends_saturated"]
    assert report_md.fmt_share(sob) == f"≥66% {report_md.BELOW_GOAL}"  # bound 1/(1/100000 + 1/20000) = 16,667
    # the median run decides: one saturated run of three is not enough
    doc["stacks"][0]["endpoints"]["mysql"] = busy_endpoint(11000.0, [{"1": 0.99}, {"1": 0.8}, {"1": 0.85}])
    sob = results.derive(doc)["stacks"][0]["endpoints"]["mysql"]["share_of_bound"]
    assert sob["backends_busy"] == 0.85 and not sob["backends_saturated"]
    assert report_md.fmt_share(sob) == f"66% {report_md.BELOW_GOAL}"
    # backends on the server's CPUs: their busy share says nothing about the backend alone
    doc["cpu_layout"] = {"server": "0,1", "loadgen": "0,1", "backends": "0,1"}
    doc["stacks"][0]["endpoints"]["mysql"] = busy_endpoint(11000.0, [{"0": 1.0, "1": 1.0}] * 3)
    sob = results.derive(doc)["stacks"][0]["endpoints"]["mysql"]["share_of_bound"]
    assert sob["backends_busy"] is None and not sob["backends_saturated"]


def test_efficiency_comes_from_the_headline_runs_only():
    ep = endpoint(20000.0, cpu_us=40.0, peaks=(100 * 2**20, 125 * 2**20), other_peak=900 * 2**20)
    eff = results.efficiency(ep)
    assert eff["requests_per_cpu_second"] == 25000.0  # 1e6 / 40 µs
    assert eff["peak_rss_bytes"] == 125 * 2**20  # the 16-connection sweep run's 900 MiB is not a headline run
    assert eff["rps_per_mib_peak_rss"] == 160.0
    assert results.efficiency(endpoint(None, cpu_us=None, peaks=(None,))) == {
        "requests_per_cpu_second": None, "peak_rss_bytes": None, "rps_per_mib_peak_rss": None}


def test_an_older_results_json_gets_the_derived_figures_when_rendered_again(tmp_path):
    doc = json.loads((FIX / "results-sample.json").read_text())  # recorded before they existed
    assert "share_of_bound" not in doc["stacks"][0]["endpoints"]["redis"]
    (tmp_path / "results.json").write_text(json.dumps(doc))
    run.render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    # node-cluster: /hello 1,123, memcslap 8,737 at 16 connections, /memcache 669 at 16: 669 / 995 = 67%
    assert f"| node-cluster | /memcache | 1,123 | 8,737 at 16 | 995 | 669 | 68% | 67% {report_md.BELOW_GOAL} |" in md
    assert "## Efficiency" in md and "| node-cluster | 9,662 |" in md  # 1e6 / 103.5 µs
    html = (tmp_path / "report.html").read_text()
    assert f'<td class="low">67% {report_md.BELOW_GOAL}</td>' in html
    assert "Share of the bound" in html and "Requests per CPU-second" in html


# ---------------------------------------------------------------- latency against percentile

def test_oha_keeps_the_whole_percentile_curve():
    from harness.loadgen import oha as loadgen_oha
    r = loadgen_oha.parse((FIX / "oha-open.json").read_text(), target_rate=400, duration=2)
    raw = json.loads((FIX / "oha-open.json").read_text())["latencyPercentiles"]
    assert set(r["percentiles_ms"]) == {k[1:] for k in raw} >= {"50", "90", "99", "99.9", "99.99"}
    assert r["percentiles_ms"]["99.99"] == pytest.approx(raw["p99.99"] * 1000, abs=0.001)


def test_a_curve_leaves_out_the_percentiles_its_request_count_cannot_resolve():
    from harness.reports import report_html
    pct = {"10": 0.1, "50": 1.0, "90": 2.0, "99": 3.0, "99.9": 4.0, "99.99": 5.0}
    assert report_html.percentile_curve({"percentiles_ms": pct, "requests": 2000}) == [
        (50.0, 1.0), (90.0, 2.0), (99.0, 3.0), (99.9, 4.0)]  # 2000 x 0.0001 < 1 request above p99.99
    assert report_html.percentile_curve({"percentiles_ms": pct, "requests": 10000})[-1] == (99.99, 5.0)
    # a run recorded before results.json kept the curve: what latency_ms has
    old = {"latency_ms": {"p50": 1.0, "p90": 2.0, "p99": 3.0, "p99.9": 4.0, "max": 9.0, "mean": 1.5}, "requests": 5000}
    assert report_html.percentile_curve(old) == [(50.0, 1.0), (90.0, 2.0), (99.0, 3.0), (99.9, 4.0)]


def test_the_percentile_axis_spaces_the_nines_evenly_and_the_latency_axis_is_logarithmic():
    from harness.reports import svg
    chart = svg.percentile_chart("t", {"a": [(50, 1.0), (90, 10.0), (99, 100.0), (99.9, 1000.0)]}, {"a": "#000"})
    xs_ys = [tuple(map(float, p.split(","))) for p in re.search(r'<polyline points="([^"]+)"', chart).group(1).split()]
    xs, ys = [x for x, _ in xs_ys], [y for _, y in xs_ys]
    assert xs[2] - xs[1] == pytest.approx(xs[3] - xs[2], abs=0.2)  # p90 -> p99 -> p99.9: one decade of 1/(1-p) each
    assert ys[0] - ys[1] == pytest.approx(ys[1] - ys[2], abs=0.2) == pytest.approx(ys[2] - ys[3], abs=0.2)
    for tick in ("p50", "p90", "p99", "p99.9", "p99.99"):
        assert f">{tick}</text>" in chart


def test_the_html_report_draws_a_latency_curve_per_endpoint_and_rate():
    from harness.reports import report_html
    doc = results.read(FIX / "results-sample.json")
    page = unescape(report_html.render(doc))
    for e in doc["settings"]["endpoints"]:
        assert f"<title>/{e}: open loop at 80% of each stack's peak</title>" in page
    assert "Open-loop latency by percentile" in page


def test_a_real_run_draws_each_stacks_curve_as_far_as_its_requests_resolve():
    from harness.reports import report_html
    doc = results.read(FIX / "results-three-stacks.json")
    page = unescape(report_html.render(doc))
    for e in doc["settings"]["endpoints"]:
        for rate in ("50%", "80%"):
            assert f"<title>/{e}: open loop at {rate} of each stack's peak</title>" in page
    netty, fpm = (next(s for s in doc["stacks"] if s["name"] == n) for n in ("java-netty", "php-fpm"))
    # 54,107 requests resolve p99.99 (5 above it); php-fpm's 8,852 on /hello at 50% do not (0.9)
    redis = report_html.open_run(netty["endpoints"]["redis"], 0.5)
    assert report_html.percentile_curve(redis)[-1] == (99.99, redis["percentiles_ms"]["99.99"])
    assert report_html.percentile_curve(report_html.open_run(fpm["endpoints"]["hello"], 0.5))[-1][0] == 99.9
    # java-netty's /hello at 80% fell behind its rate: its line is dashed, its legend flagged
    chart = next(c for c in report_html.latency_curve_charts(doc).split("<svg")
                 if "/hello: open loop at 80%" in c)
    assert re.search(r'stroke="#1f77b4" stroke-width="2.5" stroke-dasharray', chart)
    assert "java-netty 66k/s ⚑" in chart
    # every data endpoint has its share of the bound; the figures behind one, by hand
    sob = netty["endpoints"]["mysql"]["share_of_bound"]
    assert sob["share"] == round(sob["data_rps"] * (1 / sob["hello_rps"] + 1 / sob["ceiling_rps"]), 3)
    assert all(s["endpoints"][e]["share_of_bound"]["share"] for s in doc["stacks"] for e in ("redis", "mysql", "memcache"))


def test_every_table_and_chart_of_a_quick_pass_says_it_is_not_comparable():
    from harness.reports import report_html, report_md
    doc = results.read(FIX / "results-three-stacks.json")
    assert doc["settings"]["quick"]
    page = report_html.render(doc)
    assert page.count("<table") == page.count(report_md.QUICK_MARK + "</caption>") > 10
    assert page.count("<svg") == page.count(report_md.QUICK_MARK + "</figcaption>") > 5
    assert report_md.QUICK_WARNING.split(".")[0] in page
    md = report_md.render(doc)
    tables = [i for i, line in enumerate(md.splitlines()) if line.startswith("| ") and not md.splitlines()[i - 1].startswith("|")]
    assert tables and all(report_md.QUICK_MARK in md.splitlines()[i - 2] for i in tables)
    doc["settings"]["quick"] = False
    assert report_md.QUICK_MARK not in report_html.render(doc) + report_md.render(doc)


def test_the_report_opens_with_the_overview_chart_and_explains_itself_after_the_figures():
    from harness.reports import report_html
    page = report_html.render(results.read(FIX / "results-sample.json"))
    overview = page.index("<h2>Overview</h2>")
    assert page.index("<svg", overview) < page.index("<table", overview)
    assert page.index("How to read it") > page.index("<h2>Per stack</h2>")


def assert_charts_plot_the_figures(doc, html):
    """Every point a chart draws carries its value in a <title>: the bars are the headlines, the sweep
    lines every level of every stack, the circled knee each endpoint's knee; nothing else is drawn."""
    titles = set(re.findall(r"<title>([^<]*)</title>", html))
    drawn_sweep = {t for t in titles if re.fullmatch(r"\S+ \d+ conns: [\d,]+", t)}
    expected_sweep = set()
    for stack in report_md.benchmarked(doc):
        for e, ep in stack["endpoints"].items():
            median = ep["headline"]["throughput_rps"]["median"]
            assert f"{stack['name']} {e}: {median:,.1f} requests / s" in titles, (stack["name"], e)
            expected_sweep |= {f"{stack['name']} {r['connections']} conns: {r['throughput_rps']:,.0f}"
                               for r in ep["sweep"] if r.get("throughput_rps") is not None}
            if ep.get("knee_connections"):
                assert f"knee of {stack['name']}: {ep['knee_connections']} conns" in titles
    assert drawn_sweep == expected_sweep and expected_sweep
