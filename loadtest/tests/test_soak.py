"""`make soak` without a server: its detectors on synthetic series with a known behaviour, the GC log
parsers on the runtimes' own line formats, the settings, the report and `make compare` on two soaks."""
import datetime
import json
import random
import re

import pytest
from soakdocs import doc, window

from harness import compare, soak, stacks
from harness.accounting import gclog
from harness.bench import knobs
from harness.soak import report as soak_report, verdicts as soak_verdicts

TH = soak_verdicts.Thresholds()


def series(n, **per_window):
    """n five-second windows; each keyword is a function of the window index."""
    return [window(i, **{k: f(i) for k, f in per_window.items()}) for i in range(n)]


# ---------------------------------------------------------------- memory

def test_a_steady_leak_is_flagged_with_its_slope():
    ws = series(120, rss_mib=lambda i: 100 + 0.5 * i)  # 0.5 MiB per 5 s = 360 MiB/h, 10 minutes
    m = soak_verdicts.memory(ws, TH)
    assert m["leak"] is True
    assert m["slope_mib_per_h"] == pytest.approx(360, rel=0.01)
    assert m["low_mib_per_h"] <= m["slope_mib_per_h"] <= m["high_mib_per_h"]
    assert "a leak" in m["why"]


def test_noise_a_gc_sawtooth_and_early_growth_are_not_leaks():
    rng = random.Random(7)
    noisy = series(120, rss_mib=lambda i: 300 + rng.uniform(-6, 6))
    sawtooth = series(120, rss_mib=lambda i: 200 + (i % 12) * 3)  # a heap filled and collected every minute
    warming = series(120, rss_mib=lambda i: 100 + min(i, 50) * 2)  # grows for 4 minutes, then flat
    for ws in (noisy, sawtooth, warming):
        m = soak_verdicts.memory(ws, TH)
        assert m["leak"] is False, m


def test_growth_that_stops_before_the_end_is_a_bound_not_a_leak():
    """java-tomcat's first 30-minute soak (2026-11-26, -Xmx512m): RSS 195 -> 625 MiB over 23 minutes, then flat."""
    ws = series(360, rss_mib=lambda i: 195 + 1.6 * i if i < 270 else 627 + (i % 2))
    m = soak_verdicts.memory(ws, TH)
    assert m["slope_mib_per_h"] > 500 and m["leak"] is False and m["levelled_off"] is True, m
    assert abs(m["tail_slope_mib_per_h"]) < TH.leak_mib_per_h and "levelled off at 628 MiB" in m["why"]
    assert "| memory | ok levelled off" in soak_report.render_md(doc(ws))
    # Still growing at the end (a 10-minute soak on the ramp): a leak, as before.
    ws = series(120, rss_mib=lambda i: 150 + 0.15 * i)
    m = soak_verdicts.memory(ws, TH)
    assert m["leak"] is True and m["levelled_off"] is False and m["tail_slope_mib_per_h"] > TH.leak_mib_per_h


def voovan_like(floor_step=0.0, last_climb=2.4):
    """java-voovan's /redis soak (2026-11-26): native buffers freed at each full collection, about
    every 10 minutes: RSS climbs 2.3-2.7 MiB per 5 s window from ~220 MiB and falls back at 725 and 1,338 s."""
    def rss(i):
        if i < 145:
            return 220 + 2.7 * i
        if i < 268:
            return 250 + floor_step + 2.3 * (i - 145)
        return 245 + 2 * floor_step + last_climb * (i - 268)
    return series(360, rss_mib=rss)


def test_a_sawtooth_whose_floors_hold_is_not_a_leak():
    m = soak_verdicts.memory(voovan_like(), TH)
    assert m["slope_mib_per_h"] > 400 and m["leak"] is False, m  # the second half alone is a rising edge
    saw = m["sawtooth"]
    assert saw["bounded"] is True and saw["releases_at_s"] == [730, 1345] and saw["floors_mib"] == [250, 245]
    assert "the rising edge of a sawtooth, not a leak: released 2 time(s)" in m["why"]
    assert "| memory | ok sawtooth" in soak_report.render_md(doc(voovan_like()))


def test_a_sawtooth_whose_floors_rise_or_whose_last_climb_passes_the_peak_is_a_leak():
    rising = soak_verdicts.memory(voovan_like(floor_step=40), TH)  # +40 MiB a cycle: ~240 MiB/h
    assert rising["leak"] is True and rising["sawtooth"]["bounded"] is False and "the floors rise" in rising["why"]
    climbing = soak_verdicts.memory(voovan_like(last_climb=4.2), TH)  # ends at 627 MiB, over the 609 before
    assert climbing["leak"] is True and "above the peak before it" in climbing["why"]
    once = series(360, rss_mib=lambda i: 220 + 2.0 * i if i < 100 else 230 + 1.0 * (i - 100))
    m = soak_verdicts.memory(once, TH)
    assert m["leak"] is True and "one release cannot show a bound" in m["why"]


def test_slow_growth_under_the_threshold_is_reported_not_flagged():
    ws = series(720, rss_mib=lambda i: 100 + i * 5 / 3600 * 10)  # 10 MiB/h for an hour
    m = soak_verdicts.memory(ws, TH)
    assert m["slope_mib_per_h"] == pytest.approx(10, rel=0.02) and m["low_mib_per_h"] > 0
    assert m["leak"] is False and "no leak" in m["why"]


def test_too_few_samples_cannot_tell():
    m = soak_verdicts.memory(series(3), TH)
    assert m["leak"] is None and "fewer than 3" in m["why"]


def test_theil_sen_ignores_one_wild_sample_and_reduces_long_series():
    points = [(x, 2.0 * x) for x in range(50)]
    points[25] = (25, 10_000.0)
    assert soak_verdicts.theil_sen(points)["slope"] == pytest.approx(2.0)
    long = [(x, 0.5 * x) for x in range(5000)]
    fit = soak_verdicts.theil_sen(long)
    assert fit["n"] <= soak_verdicts.MAX_FIT_POINTS and fit["slope"] == pytest.approx(0.5)


# ---------------------------------------------------------------- latency, throughput, errors, GC

def test_a_stall_window_is_flagged_and_is_the_worst():
    ws = series(60)
    ws[40] = window(40, p99=950.0, max_ms=1_020.0)
    lat = soak_verdicts.latency(ws, TH)
    assert lat["stall"] and lat["stall_windows"] == [40]
    assert lat["worst_window"]["i"] == 40 and lat["threshold_ms"] == TH.stall_floor_ms  # 10 x 3 ms is under the floor
    assert soak_verdicts.window_flags(ws[40], lat["threshold_ms"], TH) == ["stall"]


def test_stalls_in_most_windows_still_stand_out():
    """A heap full from minute 17 on: stalls in most windows must not become the baseline they are judged against."""
    ws = series(60, p99=lambda i: 3.0 if i < 17 else 4_000.0, max_ms=lambda i: 8.0 if i < 17 else 10_000.0)
    lat = soak_verdicts.latency(ws, TH)
    assert lat["baseline_p99_ms"] == 3.0 and lat["median_p99_ms"] == 4_000.0
    assert lat["stall_windows"] == list(range(17, 60))


def test_a_window_without_answers_is_a_stall_and_behind():
    ws = series(20)
    ws[5] = window(5, answered=0, p50=None, p99=None, max_ms=None)
    v = soak_verdicts.judge(ws, [], False, "no GC log", TH)
    assert v["latency"]["stall_windows"] == [5] and v["latency"]["worst_window"]["i"] == 5
    assert v["throughput"]["behind_windows"] == [5] and set(v["flags"]) == {"stall", "behind"}


def start_stall(i):
    """The first real soak's window 0 (java-netty /redis, 2026-11-26): p99 531 ms, then a steady server."""
    return window(i, p99=531.0, max_ms=560.0)


def test_the_lead_in_is_shown_not_judged_and_window_0_after_it_is_judged(tmp_path):
    ws = series(24)
    d = doc(ws, lead_in=start_stall(-1))
    v = d["verdicts"]
    assert v["flags"] == [] and v["lead_in"]["over_threshold"] and "p99 531.0 ms" in v["lead_in"]["why"]
    assert "| start | – lead-in, over the stall threshold" in soak_report.render_md(d)
    # The same stall in window 0, with a lead-in before it, is the server's: flagged.
    ws = series(24)
    ws[0] = start_stall(0)
    v = doc(ws)["verdicts"]
    assert v["flags"] == ["stall"] and v["latency"]["stall_windows"] == [0] and not v["lead_in"]["over_threshold"]


def test_a_soak_recorded_without_a_lead_in_has_its_first_window_taken_as_one(tmp_path):
    from harness import __main__ as cli
    ws = series(24)
    ws[0] = start_stall(0)
    ws[0]["errors"] = {"non_2xx": 3, "timeout": 0}
    d = doc(ws, lead_in=None)
    assert "lead_in" not in d
    v = d["verdicts"]
    assert "stall" not in v["flags"] and v["latency"]["stall_windows"] == [] and v["windows"] == 23
    assert v["lead_in"]["source"].startswith("the first window") and v["lead_in"]["over_threshold"]
    assert v["flags"] == ["errors"]  # its errors still count
    # Such a soak stored with the verdicts of the harness it ran with: make report judges it again.
    stored = doc(ws, lead_in=None)
    stored["verdicts"]["flags"], stored["verdicts"]["latency"]["stall_windows"] = ["stall", "errors"], [0]
    stored["windows"][0]["flags"] = ["stall", "errors"]
    out = write_doc(tmp_path / "old", stored)
    assert cli.main(["report", str(out)]) == 0
    again = soak.read(out)
    assert again["verdicts"]["flags"] == ["errors"] and again["windows"][0]["flags"] == ["lead-in", "errors"]
    assert again["verdicts_as_run"]["flags"] == ["stall", "errors"]
    # Its GC pauses in the first window are the lead-in's too; a later one still counts.
    v = soak_verdicts.judge(ws, [[2.0, 900.0, "Pause Full", 7], [60.0, 4.0, "Pause Young", 7]], True, None, TH,
                            first_is_lead_in=True)
    assert v["gc"]["pauses"] == 1 and "gc-stall" not in v["flags"]


def test_a_stall_where_other_processes_took_the_machine_is_not_the_servers():
    """As in the first 30-minute soak of java-tomcat (2026-11-26): its 7 windows over 200 ms were all
    disturbed (other processes took 20-51 % of the machine); none of its 335 undisturbed ones was."""
    ws = series(60)
    ws[10] = window(10, p99=470.0, max_ms=490.0)
    ws[10]["disturbed"] = True
    ws[21] = window(21, p99=360.0, max_ms=380.0)  # the stall began late in 21; its CPU was counted in 22
    ws[22]["disturbed"] = True
    v = soak_verdicts.judge(ws, [], True, None, TH)
    lat = v["latency"]
    assert v["flags"] == ["disturbed-stall"] and lat["stall_windows"] == [10, 21] == lat["disturbed_stall_windows"]
    assert not lat["stall"] and "2 of them disturbed" in lat["why"]
    ws[50] = window(50, p99=40.0, max_ms=55.0)  # the server's own worst, away from the disturbance
    lat = soak_verdicts.judge(ws, [], True, None, TH)["latency"]
    assert lat["worst_window"]["i"] == 10 and lat["worst_undisturbed_window"]["i"] == 50
    assert "away from disturbed windows at 250 s: p99 40.0 ms" in lat["why"]
    assert soak_verdicts.judge(series(20), [], True, None, TH)["latency"]["worst_undisturbed_window"] is None
    # One stall away from any disturbance is the server's: flagged stall, the disturbed ones still listed.
    ws[40] = window(40, p99=400.0, max_ms=420.0)
    v = soak_verdicts.judge(ws, [], True, None, TH)
    assert v["flags"] == ["stall"] and v["latency"]["disturbed_stall_windows"] == [10, 21]
    md = soak_report.render_md(doc(ws))
    assert "⚑ stall: the server stopped answering" in md


def test_a_steady_server_gets_no_flag():
    rng = random.Random(3)
    ws = series(120, p99=lambda i: rng.uniform(2, 6), max_ms=lambda i: rng.uniform(5, 60))
    v = soak_verdicts.judge(ws, [[10.0, 4.0, "Pause Young (Allocation Failure)", 1]], True, None, TH)
    assert v["flags"] == [], v
    assert v["gc"]["longest_ms"] == 4.0 and v["gc"]["pauses"] == 1


def test_ten_times_a_fast_p99_under_the_floor_is_no_stall():
    ws = series(30, p99=lambda i: 0.3, max_ms=lambda i: 1.0)
    ws[10] = window(10, p99=5.0, max_ms=40.0)
    assert soak_verdicts.latency(ws, TH)["stall"] is False


def test_falling_behind_in_one_window_and_errors_are_counted():
    ws = series(20)
    ws[3] = window(3, answered=4_000, errors={"non_2xx": 12, "timeout": 3})
    v = soak_verdicts.judge(ws, [], True, None, TH)
    assert v["throughput"]["behind_windows"] == [3] and v["throughput"]["behind"]
    assert v["errors"]["count"] == 15 and v["errors"]["by_kind"] == {"non_2xx": 12, "timeout": 3}
    assert set(v["flags"]) == {"behind", "errors"}


def test_a_gc_pause_as_long_as_a_stall_is_flagged_and_no_log_is_not_zero():
    ws = series(20)
    v = soak_verdicts.judge(ws, [[12.0, 2_500.0, "Pause Full (Allocation Failure)", 7]], True, None, TH)
    assert "gc-stall" in v["flags"] and v["gc"]["longest_at_s"] == 12.0
    php = soak_verdicts.judge(ws, [], False, gclog.NO_GC_LOG["php"], TH)
    assert php["gc"]["pauses"] is None and php["gc"]["longest_ms"] is None and "no GC log" in php["gc"]["why"]


# ---------------------------------------------------------------- GC logs

JVM_LOG = """[2026-11-24T03:00:00.000+0000][0.010s][info][gc] Using Serial
[2026-11-24T03:00:01.250+0000][1.260s][info][gc] GC(0) Pause Young (Allocation Failure) 17M->2M(61M) 1.234ms
[2026-11-24T03:00:02.000+0000][2.010s][info][gc,phases] GC(1) Phase 1: Mark live objects 3.100ms
[2026-11-24T03:00:02.500+0000][2.510s][info][gc] GC(1) Pause Full (Allocation Failure) 60M->41M(61M) 10512.880ms
[2026-11-24T03:00:03.000+0000][3.010s][info][gc] GC(2) Pause Young (Normal) (G1 Evacuation Pause) 24M->4M(256M) 3.456ms
[2026-11-24T03:00:03.100+0000][3.110s][info][gc,phases] GC(3) y: Pause Mark Start 0.012ms
[2026-11-24T03:00:03.200+0000][3.210s][info][gc] GC(4) Pause Init Mark 0.080ms
[2026-11-24T03:00:03.300+0000][3.310s][info][gc] GC(4) Concurrent marking 20M->20M(64M) 5.120ms
[2026-11-24T03:00:03.400+0000][3.410s][info][gc] GC(5) Minor Collection (Allocation Rate) 28M(1%)->14M(1%) 0.039s
"""


def epoch(text):
    return datetime.datetime.fromisoformat(text).timestamp()


def test_jvm_pauses_are_read_from_every_collector_format_and_nothing_else():
    pauses = gclog.parse_jvm(JVM_LOG.splitlines(), pid=7)
    assert [(p.kind, p.ms) for p in pauses] == [
        ("Pause Young (Allocation Failure)", 1.234), ("Pause Full (Allocation Failure)", 10512.88),
        ("Pause Young (Normal) (G1 Evacuation Pause)", 3.456), ("Pause Mark Start", 0.012), ("Pause Init Mark", 0.08)]
    assert pauses[1].t == pytest.approx(epoch("2026-11-24T03:00:02.500+00:00")) and pauses[1].pid == 7


NODE_LOG = """server listening
[5425:0x2651d000]       32 ms: Scavenge 5.2 (6.3) -> 4.7 (7.3) MB, pooled: 0 MB, 1.01 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure;
[5426:0x5a1b2c3d]     2500 ms: Mark-Compact (reduce) 40.1 (52.3) -> 38.2 (50.1) MB, pooled: 0 MB, 35.70 / 0.00 ms (+ 1.2 ms in 10 steps since start of marking, biggest step 0.3 ms, walltime since start of marking 15 ms) (average mu = 0.9, current mu = 0.8) finalize incremental marking via task; GC in old space requested
[3745:0xdc01490]       55 ms: Scavenge 3.8 (4.0) -> 3.4 (5.0) MB, 7.53 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure;
[5425:0x2651d000]       90 ms: Scavenge (interleaved) 6.0 (8.3) -> 5.6 (9.1) MB, pooled: 0 MB, 2.24 / 0.00 ms  (average mu = 1.000, current mu = 1.000) allocation failure;
"""


def test_node_pauses_are_placed_by_their_process_start():
    pauses = gclog.parse_node(NODE_LOG.splitlines(), {5425: 1000.0, 5426: 2000.0})
    assert [(p.pid, p.kind, p.ms) for p in pauses] == [
        (5425, "Scavenge", 1.01), (5426, "Mark-Compact (reduce)", 35.7), (3745, "Scavenge", 7.53),
        (5425, "Scavenge (interleaved)", 2.24)]
    assert [p.t for p in pauses] == [pytest.approx(1000.032), pytest.approx(2002.5), None, pytest.approx(1000.09)]
    cut = "[5425:0x2651d000]      120 ms: Scavenge 6.0 (8.3) -> 5.[5426:0x5a1b2c3d] x"
    assert gclog.unreadable_node_lines(NODE_LOG.splitlines() + [cut]) == 1


def test_gc_logging_is_added_to_what_the_stack_already_gets(tmp_path):
    env = gclog.environment("jvm", tmp_path, {"JAVA_TOOL_OPTIONS": "-Dfoo=1"})
    assert env["JAVA_TOOL_OPTIONS"].startswith("-Dfoo=1 -Xlog:gc,gc+phases:file=")
    assert env["JAVA_TOOL_OPTIONS"].endswith("gc-%p.log:utctime,uptime,level,tags:filecount=0")
    with pytest.raises(gclog.GcLogError, match="RESULTS_DIR"):
        gclog.environment("jvm", tmp_path / "with space", {})
    node = gclog.environment("node", tmp_path, {"NODE_OPTIONS": "--max-semi-space-size=4"})
    assert node["NODE_OPTIONS"] == f"--max-semi-space-size=4 --require {gclog.NODE_PRELOAD}"
    assert gclog.node_quote('/a b/"x".cjs') == '"/a b/\\"x\\".cjs"'
    assert gclog.environment("php", tmp_path, {}) == {}


@pytest.mark.parametrize("language,toolchain,kind", [("Java", {"java": 21}, "jvm"), ("JavaScript", {"node": 24}, "node"),
                                                     ("PHP", {}, "php"), ("Python", {}, "unknown")])
def test_the_runtime_is_known_from_the_manifest(language, toolchain, kind):
    s = stacks.Stack(name="x", dir=".", language=language, framework="f", port=1, build="true", run="true",
                     toolchain=toolchain)
    assert gclog.runtime(s) == kind


def test_conclude_places_the_pauses_in_their_windows_and_leaves_the_warm_up_out(tmp_path):
    d = doc(series(10), pauses=())
    d["soak_started"] = epoch("2026-11-24T03:00:00.000+00:00")
    (tmp_path / "raw" / "gc").mkdir(parents=True)
    warm = "[2026-11-24T02:59:50.000+0000][1.0s][info][gc] GC(0) Pause Young (Allocation Failure) 1M->1M(2M) 9.000ms\n"
    (tmp_path / "raw" / "gc" / "gc-7.log").write_text(warm + JVM_LOG)
    soak.conclude(d, tmp_path, TH)
    assert d["gc"]["before_soak"] == 1 and len(d["gc"]["pauses"]) == 5
    assert d["windows"][0]["gc_pauses"] == 5 and d["windows"][0]["gc_longest_ms"] == 10512.88
    assert d["windows"][1]["gc_pauses"] == 0 and d["windows"][1]["gc_longest_ms"] == 0.0
    assert "gc-stall" in d["verdicts"]["flags"] and d["complete"]


# ---------------------------------------------------------------- settings, the rate

def test_bad_settings_are_refused_plainly():
    base = {"STACK": "java-netty", "ENDPOINT": "redis"}
    for extra, said in [({"STACK": ""}, "STACK=<one stack>"), ({"ENDPOINT": "nope"}, "ENDPOINT='nope'"),
                        ({"WINDOW": "0"}, "WINDOW=0: at least 1"), ({"DURATION": "10", "WINDOW": "5"}, "at least 15"),
                        ({"RATE": "fast"}, "not a number"), ({"RATE_FRACTION": "2"}, "at most 1"),
                        ({"STACK_ENV": "oops"}, "not VAR=value"),
                        ({"ENDPOINT": "sleep", "RATE": "10610", "CONNECTIONS": "64"},
                         "64 connections cannot carry 10,610 req/s on /sleep.*at most 6,400 req/s.*CONNECTIONS=256")]:
        with pytest.raises(knobs.Usage, match=said):
            soak.SoakSettings.from_env({**base, **extra})
    s = soak.SoakSettings.from_env({**base, "DURATION": "60", "WINDOW": "2", "STALL_FLOOR_MS": "50"})
    assert (s.windows, s.thresholds.stall_floor_ms, s.duration) == (30, 50.0, 60.0)


def test_sleep_gets_the_connections_its_rate_needs():
    """java-tomcat's /sleep soaks of 2026-11-26 at 10,610 req/s, first given 64 connections: they fell behind."""
    assert soak.too_few_connections("sleep", 10_610, 256) is None
    assert soak.too_few_connections("redis", 10_610, 64) is None  # no wait of its own: the soak shows what the stack does
    assert "at most 6,400 req/s" in soak.too_few_connections("sleep", 10_610, 64)
    assert [soak.enough_connections(r) for r in (100, 3_200, 10_610, 20_000)] == [2, 64, 256, 512]


def results_json(path, started, cpu_model, peak, knee=16):
    path.mkdir(parents=True)
    ep = {"headline": {"throughput_rps": {"median": peak}, "connections": 256, "flags": []}, "knee_connections": knee}
    path.joinpath("results.json").write_text(json.dumps({
        "schema": "reference-servers/bench-results", "started": started, "machine": {"cpu_model": cpu_model, "cpus": 2},
        "stacks": [{"name": "java-netty", "endpoints": {"redis": ep}}]}))


def test_the_default_peak_is_the_newest_of_this_machine(tmp_path):
    here = {"cpu_model": "AMD EPYC", "cpus": 2}
    results_json(tmp_path / "a", "2026-11-20T00:00:00+00:00", "AMD EPYC", 10_000)
    results_json(tmp_path / "b", "2026-11-22T00:00:00+00:00", "AMD EPYC", 12_000, knee=64)
    results_json(tmp_path / "c", "2026-11-23T00:00:00+00:00", "Intel Xeon", 30_000)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "results.json").write_text("{not json")
    found = soak.peak_from_results(tmp_path, "java-netty", "redis", here)
    assert found["peak_rps"] == 12_000 and found["knee_connections"] == 64 and found["source"].endswith("b/results.json")
    assert soak.peak_from_results(tmp_path, "java-netty", "mysql", here) is None


# ---------------------------------------------------------------- report and compare

def flagged_doc():
    ws = series(60, rss_mib=lambda i: 100 + i)
    ws[30] = window(30, p99=900.0, max_ms=1_100.0, rss_mib=130)
    return doc(ws, pauses=[[151.0, 1_050.0, "Pause Full (Allocation Failure)", 7]], started="2026-11-24T05:00:00+00:00")


def test_the_report_shows_every_verdict_and_opens_offline():
    d = flagged_doc()
    assert set(d["verdicts"]["flags"]) == {"leak", "stall", "gc-stall"}
    md = soak_report.render_md(d)
    assert "⚑ leak" in md and "stall window" in md and "Flagged windows (1)" in md and md.rstrip().endswith(d["command"])
    page = soak_report.render_html(d)
    assert page.count("<svg") == 5 and "<script" not in page and "http://" not in page.replace("http://www.w3.org/2000/svg", "")
    # What the charts plot: the stalled window shaded where it happened, the GC pause a point at its time and length.
    titles = re.findall(r"<title>([^<]*)</title>", page)
    assert "stall at 2m30s" in titles and "GC pause at 2:31: 1,050.00 ms" in titles
    assert "stall threshold 200 ms" in titles
    php = doc(series(10), runtime="php")
    assert "no GC log" in soak_report.render_md(php) and soak_report.render_html(php).count("<svg") == 4


def write_doc(path, d):
    path.mkdir(parents=True)
    soak.write(d, path)
    return path


def test_compare_two_soaks_names_what_appeared(tmp_path):
    rng = random.Random(5)
    clean = doc(series(60, p99=lambda i: rng.uniform(2.5, 3.5)), pauses=[[20.0, 5.0, "Pause Young (Allocation Failure)", 7]])
    old, new = compare.load(write_doc(tmp_path / "old", clean)), compare.load(write_doc(tmp_path / "new", flagged_doc()))
    assert old.kind == new.kind == "soak"
    result = compare.compare(old, new)
    rows = {r.label: r for r in result["rows"]}
    assert rows["flag: leak"].status == rows["flag: stall"].status == "regression"
    assert rows["RSS over the second half, MiB"].status == "regression"  # 100 MiB flat against 130-160 MiB
    assert rows["p50 per window, ms"].status == "noise"
    back = compare.compare(new, old)
    assert {r.label: r.status for r in back["rows"]}["flag: leak"] == "improvement"
    md = compare.render_md(old, new, result)
    assert md.startswith("# Compare two soaks") and "flag: leak" in md and "▼" in md
    assert "<table>" in compare.render_html(old, new, result)


def test_compare_refuses_two_different_soaks_or_a_soak_and_a_bench(tmp_path):
    a = compare.load(write_doc(tmp_path / "a", doc(series(10))))
    b = compare.load(write_doc(tmp_path / "b", doc(series(10), stack="node-cluster")))
    with pytest.raises(compare.CompareError, match="different things"):
        compare.compare(a, b)
    bench = compare.Run(tmp_path / "results.json", "bench", {})
    with pytest.raises(compare.CompareError, match="like with like"):
        compare.compare(a, bench)


def test_make_report_renders_a_soak_again(tmp_path):
    from harness import __main__ as cli
    out = write_doc(tmp_path / "soak", flagged_doc())
    assert cli.main(["report", str(out)]) == 0
    assert "⚑ leak" in (out / "report.md").read_text() and (out / "report.html").read_text().count("<svg") == 5


def test_make_report_draws_the_verdicts_again_from_the_stored_windows(tmp_path, monkeypatch):
    from harness import __main__ as cli
    d = doc(series(12))
    d["verdicts"]["flags"] = ["stall", "leak"]  # as an older harness (or older thresholds) judged them
    d["verdicts"]["latency"].update(stall=True, stall_windows=[0])
    out = write_doc(tmp_path / "soak", d)
    assert cli.main(["report", str(out)]) == 0
    again = soak.read(out)
    assert again["verdicts"]["flags"] == [] and again["verdicts_as_run"]["flags"] == ["stall", "leak"]
    assert again["rejudged"]["flags_before"] == ["stall", "leak"] and again["rejudged"]["flags"] == []
    assert "as the soak ran, the flags were: stall leak" in (out / "report.md").read_text()
    assert "⚑" not in (out / "report.md").read_text().split("| verdict")[1].split("\n\n")[0]
    # Rendered twice: what it ran with stays recorded once.
    assert cli.main(["report", str(out)]) == 0
    assert soak.read(out)["verdicts_as_run"]["flags"] == ["stall", "leak"]


def test_the_thresholds_a_soak_was_asked_for_are_kept_and_the_environment_overrides(tmp_path, monkeypatch):
    ws = series(12)
    ws[6] = window(6, p99=150.0, max_ms=160.0)  # 50 x the usual p99, under the 200 ms floor
    d = doc(ws)
    assert d["verdicts"]["flags"] == []
    d["command"] += " STALL_FLOOR_MS=100 STACK_ENV='A=1 B=2'"
    out = write_doc(tmp_path / "soak", d)
    for name, *_ in soak.THRESHOLD_KNOBS:
        monkeypatch.delenv(name, raising=False)
    soak.report_again(out, say=lambda *a: None)
    again = soak.read(out)
    assert again["verdicts"]["thresholds"]["stall_floor_ms"] == 100 and again["verdicts"]["flags"] == ["stall"]
    assert again["windows"][6]["flags"] == ["stall"]
    soak.report_again(out, env={"STALL_FLOOR_MS": "500"}, say=lambda *a: None)
    assert soak.read(out)["verdicts"]["flags"] == []
    with pytest.raises(knobs.Usage, match="STALL_FACTOR"):
        soak.report_again(out, env={"STALL_FACTOR": "x"}, say=lambda *a: None)


def test_a_refused_soak_says_why_and_judges_nothing():
    d = doc([])
    d.update(complete=False, refused="soakserver (the defaults) breaks the contract on /hello")
    md = soak_report.render_md(d)
    assert "**Refused: soakserver (the defaults) breaks the contract" in md and "| verdict" not in md
    assert "<svg" not in soak_report.render_html(d)
