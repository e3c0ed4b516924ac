"""`make ab`'s input, its per-round figures and its summary, without starting anything (the runs
themselves: test_ab_e2e.py)."""
import json
import shlex

import pytest
from abdocs import ab_doc, ab_round

from harness import ab, stacks
from harness.accounting import cpus, stats
from harness.bench import knobs
from harness.verify import golden


def test_sides_are_parsed_with_shell_quoting():
    assert knobs.parse_env("", "A") == {}
    assert knobs.parse_env("X=1 JAVA_OPTS='-Xmx1g -Xss512k' EMPTY=", "B") == {
        "X": "1", "JAVA_OPTS": "-Xmx1g -Xss512k", "EMPTY": ""}


@pytest.mark.parametrize("text, says", [
    ("X", "is not VAR=value"),
    ("=1", "is not VAR=value"),
    ("1X=2", "is not VAR=value"),
    ("X=1 X=2", "given twice"),
    ("PORT=9000", "set by the harness"),
    ("X='open", "No closing quotation"),
])
def test_a_bad_side_is_refused_plainly(text, says):
    with pytest.raises(knobs.Usage, match=says):
        knobs.parse_env(text, "B")


def test_settings_come_from_the_environment_with_short_names():
    s = ab.AbSettings.from_env({"STACK": "node-cluster", "ENDPOINT": "/redis", "A": "", "B": "WORKERS=2",
                                "ROUNDS": "4", "CONNECTIONS": "256", "DURATION": "5", "OPEN_RATE": "2000",
                                "WARMUP_MAX": "0", "SAVE": "node-cluster/tuning/workers.json", "BUILD": "0"})
    assert (s.stack, s.endpoint, s.a, s.b) == ("node-cluster", "redis", {}, {"WORKERS": "2"})
    assert (s.rounds, s.connections, s.duration, s.open_rate, s.warmup_max, s.warmup_min) == (4, 256, 5.0, 2000.0, 0.0, 0.0)
    assert not s.build and ab.AbSettings.from_env({"STACK": "x", "ENDPOINT": "hello"}).build
    b = s.bench_settings()
    assert b.concurrency == [256] and b.endpoints == ["redis"] and not b.calibrate and b.open_duration == 5.0


@pytest.mark.parametrize("env, says", [
    ({"ENDPOINT": "hello"}, "STACK=<one stack> is required"),
    ({"STACK": "a,b", "ENDPOINT": "hello"}, "STACK=<one stack>"),
    ({"STACK": "x", "ENDPOINT": "nope"}, "ENDPOINT='nope': one of hello"),
    ({"STACK": "x", "ENDPOINT": "hello", "ROUNDS": "1"}, "ROUNDS=1: at least 2"),
    ({"STACK": "x", "ENDPOINT": "hello", "DURATION": "soon"}, "not a number"),
    ({"STACK": "x", "ENDPOINT": "hello", "OPEN_RATE": "0"}, "OPEN_RATE=0: at least 1"),
])
def test_bad_settings_are_refused(env, says):
    with pytest.raises(knobs.Usage, match=says):
        ab.AbSettings.from_env(env)


def test_bad_input_exits_2_before_anything_starts(capsys):
    assert ab.main({"STACK": "no-such-stack", "ENDPOINT": "hello"}) == 2
    assert "no such stack" in capsys.readouterr().err
    assert ab.main({"STACK": "x", "ENDPOINT": "hello", "B": "PORT=1"}) == 2


def test_the_printed_command_gives_back_the_same_sides():
    s = ab.AbSettings("java-netty", "hello", {}, {"JAVA_OPTS": "-XX:+UseParallelGC -Xss256k", "Q": "it's"})
    words = shlex.split(s.command(cpus.Layout([0], [1], [1], "default for 2 CPUs")))
    env = dict(w.split("=", 1) for w in words[2:])
    assert words[:2] == ["make", "ab"]
    assert knobs.parse_env(env["A"], "A") == s.a and knobs.parse_env(env["B"], "B") == s.b
    assert env["ROUNDS"] == "3" and env["CONNECTIONS"] == "64" and "CPUS_SERVER" not in env


def test_golden_cases_of_one_endpoint():
    names = {c.name for c in golden.golden_cases("hello")}
    assert {"hello", "hello HEAD", "POST hello", "trailing slash"} <= names
    assert "case-sensitive path" not in names and not any("redis" in n for n in names)
    assert all(c.target.split("?")[0].rstrip("/") == "/redis" for c in golden.golden_cases("redis"))


def test_a_knob_the_stack_never_mentions_is_pointed_out(tmp_path):
    (tmp_path / "server.js").write_text("const workers = process.env.WORKERS || 4;\n")
    (tmp_path / "node_modules").mkdir()
    (tmp_path / "node_modules" / "lib.js").write_text("process.env.HIDDEN\n")
    stack = stacks.Stack(name="t", dir=tmp_path, language="x", framework="x", port=1, build="", run="")
    assert knobs.unread_knobs(stack, {"WORKERS": "2", "WORKRES": "2", "HIDDEN": "1", "IDLE_TIMEOUT_MS": "1"}) == ["HIDDEN", "WORKRES"]


def test_summary_of_a_known_difference_and_its_caveats():
    rounds = [ab_round("A", 1, 20000, 50.0, 3.1, 100 << 20), ab_round("B", 1, 12000, 80.0, 3.0, 60 << 20),
              ab_round("A", 2, 20500, 49.0, 2.9, 101 << 20), ab_round("B", 2, 12100, 79.0, 3.3, 60 << 20, ["disturbed"]),
              ab_round("A", 3, 19800, 51.0, 3.2, 100 << 20), ab_round("B", 3, 11900, 81.0, 3.1, 61 << 20, errors=7)]
    doc = ab_doc(rounds)
    doc["summary"] = ab.summarize(doc)
    f = doc["summary"]["figures"]
    assert "open_p99_ms" not in f  # no open loop was asked for
    assert f["throughput_rps"]["word"] == stats.REAL and f["throughput_rps"]["better"] is False
    assert f["throughput_rps"]["samples"] == {"A": [20000, 20500, 19800], "B": [12000, 12100, 11900]}
    assert f["cpu_us_per_request"]["word"] == stats.REAL and f["cpu_us_per_request"]["better"] is False
    assert f["p99_ms"]["word"] == stats.NOISE
    assert f["peak_rss_bytes"]["word"] == stats.REAL and f["peak_rss_bytes"]["better"] is True
    assert doc["summary"]["false_positive_bound"] == 0.1
    caveats = " ".join(doc["summary"]["caveats"])
    assert "disturbed rounds" in caveats and "B2" in caveats and "B3 7" in caveats
    md = ab.render_md(doc)
    assert "| req/s | 20,000 (19,800–20,500) | 12,000 (11,900–12,100) | -40.0% | **real difference**: B worse |" in md
    assert "| closed p99 ms | 3.10 (2.90–3.20) | 3.10 (3.00–3.30) | +0.0% | within the noise of this run |" in md
    assert "at most 10.0%" in md
    assert md.rstrip().endswith(doc["command"])  # the summary ends with the command that repeats it


def test_a_refused_side_is_said_and_not_summarized_as_a_number():
    doc = ab_doc([ab_round("A", 1, 20000, 50.0, 3.1, 100 << 20)])
    doc.update(refused="side B (WORKERS=1) breaks the contract on /hello, so it is not measured: golden responses: ...",
               complete=False)
    doc["summary"] = ab.summarize(doc)
    md = ab.render_md(doc)
    assert "**Refused**: side B" in md
    assert doc["summary"]["figures"]["throughput_rps"]["word"] == stats.UNKNOWN
    assert "did not complete" not in md


def test_two_rounds_a_side_give_medians_but_no_verdict():
    doc = ab_doc([ab_round(s, i, 20000 if s == "A" else 12000 + i, 50.0, 3.0, 1 << 20) for i in (1, 2) for s in "AB"])
    doc["summary"] = ab.summarize(doc)
    assert doc["summary"]["figures"]["throughput_rps"]["word"] == stats.UNKNOWN
    md = ab.render_md(doc)
    assert "no verdict with fewer than 3 rounds a side" in md and "real difference" not in md


def test_the_compact_copy_has_no_raw_outputs_nor_accounting(tmp_path):
    rounds = [ab_round(s, i, 1000 + i, 50.0, 3.0, 1 << 20) for i in (1, 2) for s in "AB"]
    doc = ab_doc(rounds)
    doc["summary"] = ab.summarize(doc)
    path = ab.save_compact(doc, str(tmp_path / "tuning" / "workers.json"))
    saved = json.loads(path.read_text())
    assert saved["compact"] and saved["command"] == doc["command"] and saved["summary"] == doc["summary"]
    assert set(saved["rounds"][0]) == {"round", "side", "figures", "flags"}
    assert "save" not in saved["settings"] and "build" not in saved["settings"] and '"raw"' not in path.read_text() and '"stats"' not in path.read_text()
