"""The load profiles' accounting, proved on the lax test server: served as the contract says, each
profile's run carries no flag of its own; served wrongly in the way the profile exists to show, it
is flagged so. Speed is never asserted."""
import dataclasses
import json
import pathlib
import types

import pytest
from test_protocol import lax_server

from harness.accounting import cpus
from harness.bench import profiles, run, settings
from harness.bench.box import Box
from harness.contract import protocol
from harness.loadgen import wrk
from harness.reports import report_md

FIX = pathlib.Path(__file__).with_name("fixtures")
PROFILE_FLAGS = {"kept-alive", "refusal-served", "valid-lost", "stalled", "no-answers"}


def record(sent_valid=0, sent_noise=0, closes=0, answers=None, read=0, seconds=2.0, cpu=1.0) -> dict:
    return {"duration_s": seconds, "errors": {"read": read}, "stats": {"server_cpu_s": cpu},
            "shape": {"sent_valid": sent_valid, "sent_noise": sent_noise, "closes": closes, "answers": answers or {}}}


def test_churn_counts_the_connections_closed_with_or_without_saying_so():
    run = profiles.Run("hello", 8, wrk.Shape(close_every=1))
    said = profiles.judge(run, record(1000, closes=1000, answers={200: 1000}))
    silent = profiles.judge(run, record(2000, read=1000, answers={200: 1000}))  # wrk wrote one more on each
    assert said["connections"] == silent["connections"] == 1000 and said["connections_per_s"] == 500
    assert said["cpu_us_per_connection"] == 1000.0 and said["flags"] == silent["flags"] == []
    kept = profiles.judge(run, record(1000, answers={200: 1000}))
    assert kept["flags"] == ["kept-alive"]


def test_noisy_flags_a_refusal_answered_200_and_a_valid_request_lost():
    run = profiles.Run("hello", 8, wrk.Shape(noise_every=10, noise=profiles.NOISE))
    clean = profiles.judge(run, record(900, 100, answers={200: 895, 400: 75, 431: 25}))
    assert clean["flags"] == [] and clean["valid_rps"] == 447.5 and clean["noise_sent"] == 100
    served = profiles.judge(run, record(900, 100, answers={200: 920, 400: 50, 431: 25}))
    assert served["flags"] == ["refusal-served"]
    lost = profiles.judge(run, record(900, 100, answers={200: 800, 400: 75, 431: 25}))
    assert lost["flags"] == ["valid-lost"] and lost["valid_lost"] == 900 - 800 - (8 + 1)


def test_the_noise_is_the_contracts_refusal_cases():
    head, smuggle, no_host, bad_id = profiles.NOISE
    assert len(head) > protocol.LIMITS.max_head
    assert b"Transfer-Encoding: chunked" in smuggle and b"Content-Length" in smuggle
    assert b"Host:" not in no_host and b"HTTP/1.1" in no_host
    assert b"id=01 " in bad_id


def test_a_shape_is_one_thing_at_a_time():
    with pytest.raises(ValueError):
        wrk.lua_script("hello", shape=wrk.Shape(pipeline=16, close_every=1))
    with pytest.raises(ValueError):
        wrk.lua_script("hello", shape=wrk.Shape(noise_every=10))
    plain = wrk.lua_script("hello")
    assert "function response" not in plain  # the sweep's runs do not pay for counting answers
    assert "function response" in wrk.lua_script("hello", shape=wrk.Shape(counted=True))
    assert "\\013\\010" in wrk.lua_script("hello", shape=wrk.Shape(noise_every=10, noise=(b"GET / HTTP/1.1\r\n\r\n",)))


def test_many_counts_timeouts_and_lost_requests():
    run = profiles.Run("redis", 4096, wrk.Shape(counted=True))
    assert profiles.judge(run, record(50_000, answers={200: 50_000}))["flags"] == []
    timed_out = profiles.judge(run, {**record(50_000, answers={200: 50_000}), "errors": {"timeout": 12}})
    assert timed_out["flags"] == ["stalled"]
    lost = profiles.judge(run, record(50_000, answers={200: 40_000}))
    assert lost["flags"] == ["valid-lost"] and lost["valid_lost"] == 10_000 - (4096 + 1)


CASES = [  # (profile, fault of the lax server, the flag it must raise; None: no profile flag)
    ("churn", "none", None), ("pipeline", "none", None), ("noisy", "none", None), ("many", "none", None),
    ("churn", "ignores_close", "kept-alive"),
    ("pipeline", "pipeline_first_only", "stalled"),
    ("noisy", "host_lax", "refusal-served"),
]


@pytest.mark.e2e
@pytest.mark.parametrize("profile,fault,flag", CASES)
def test_each_profile_on_the_lax_server(profile, fault, flag, tmp_path):
    limits = protocol.LIMITS
    cfg = settings.Settings(profile_duration=4, timeout_s=1)  # wrk counts timeouts every 2 s
    box = Box(cfg, cpus.Layout.from_env(), tmp_path / "run")
    with lax_server(fault, limits) as target:
        stack = types.SimpleNamespace(name="laxserver", url=f"http://127.0.0.1:{target.port}")
        runs = profiles.PROFILES[profile].runs
        if profile == "many":  # its shape on /hello at 512 connections: the lax server is one Python process
            runs = (dataclasses.replace(runs[0], endpoint="hello", connections=512),)
        got = [box.profile_run(stack, profile, i, run, target.pids()[0]) for i, run in enumerate(runs)]
    raised = {f for rec in got for f in rec["flags"]} & PROFILE_FLAGS
    assert raised == ({flag} if flag else set()), [(r["profile_run"], r["answers"], r["errors"], r.get("shape"), r.get("latency_ms")) for r in got]
    assert all(rec["requests"] > 0 for rec in got)


def test_the_reports_give_each_profile_its_table_and_chart(tmp_path):
    doc = json.loads((FIX / "results-sample.json").read_text())
    x = next(s for s in doc["stacks"] if s.get("endpoints"))
    churn = profiles.PROFILES["churn"]
    rec = {"kind": "closed", "endpoint": "hello", "connections": 64, "throughput_rps": 4000.0, "requests": 20000,
           "errors": {"connect": 0, "read": 0, "timeout": 0}, "latency_ms": {"p99": 3.5}, "flags": [],
           "cpu_us_per_request": 90.0, **profiles.judge(churn.runs[0], record(20000, closes=20000,
                                                                               answers={200: 20000}, seconds=5.0))}
    x["profiles"] = {"churn": {"about": churn.about, "runs": [rec]}}
    (tmp_path / "results.json").write_text(json.dumps(doc))
    run.render(tmp_path)
    md, html = (tmp_path / "report.md").read_text(), (tmp_path / "report.html").read_text()
    assert "## Profile: churn" in md and "4,000 conn/s, 50.0 µs CPU/conn" in md
    assert "<h2>Profile: churn</h2>" in html and "Profile churn: connections / s per stack" in html


def test_a_pipelined_run_has_no_latency_and_a_lost_p99_is_not_printed_as_zero():
    pipelined = profiles.judge(profiles.Run("hello", 64, wrk.Shape(pipeline=16)),
                               record(16_000, answers={200: 16_000}))
    assert pipelined["latency_ms"] is None and pipelined["flags"] == []
    assert "latency_ms" not in profiles.judge(profiles.Run("hello", 8, wrk.Shape(close_every=1)),
                                              record(1000, closes=1000, answers={200: 1000}))
    doc = json.loads((FIX / "results-sample.json").read_text())
    x = next(s for s in doc["stacks"] if s.get("endpoints"))
    base = {"kind": "closed", "endpoint": "hello", "throughput_rps": 1.0, "flags": [], "errors": {}}
    x["profiles"] = {"pipeline": {"about": "", "runs": [
        {**base, "profile_run": "lost", "latency_ms": {"p99": 0.0, "max": 45.4}},  # as wrk printed it
        {**base, "profile_run": "kept", "latency_ms": {"p99": 3.5, "max": 45.4}}]}}
    rows = {r[1]: r[4] for r in report_md.profile_rows(doc, "pipeline")}
    assert rows == {"lost": "–", "kept": "3.50"}
