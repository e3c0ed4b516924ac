"""Parsing the tools' recorded outputs (tests/fixtures/, captured on this machine) into results.json fields."""
import json
import pathlib

import pytest

from harness.bench import calibrate
from harness.loadgen import oha as loadgen_oha, wrk as loadgen_wrk

FIX = pathlib.Path(__file__).with_name("fixtures")


def test_wrk_summary_line_gives_throughput_latency_and_per_second_series():
    r = loadgen_wrk.parse((FIX / "wrk-hello-c256.txt").read_text())
    assert r["requests"] == 48850
    assert r["duration_s"] == pytest.approx(2.088, abs=0.001)
    assert r["throughput_rps"] == pytest.approx(48850 / 2.087574, rel=1e-3)
    assert r["latency_ms"] == {"p50": 8.352, "p90": 17.243, "p99": 80.086, "p99.9": 101.865, "max": 102.223,
                               "mean": 11.363}
    assert r["errors"] == {"non_2xx": 0, "connect": 0, "read": 0, "write": 0, "timeout": 0, "other": 0}
    # three wall-clock seconds were touched; the partial first and last are dropped
    assert r["per_second_rps"] == [27275]


def test_wrk_counts_error_statuses_as_non_2xx():
    r = loadgen_wrk.parse((FIX / "wrk-redis-404s-c16.txt").read_text())
    assert r["errors"]["non_2xx"] == r["requests"] == 23650
    assert r["per_second_rps"] == [7813, 8236]  # seconds in time order, not in the order Lua printed them


def test_wrk_that_could_not_connect_is_an_explained_failure():
    with pytest.raises(loadgen_wrk.WrkOutputError, match="Connection refused"):
        loadgen_wrk.parse((FIX / "wrk-refused.txt").read_text())


def test_wrk_script_draws_ids_only_for_data_endpoints():
    assert 'local path = "/redis?id="' in loadgen_wrk.lua_script("redis")
    assert "local random_ids = true" in loadgen_wrk.lua_script("mysql")
    assert "local random_ids = false" in loadgen_wrk.lua_script("hello")
    assert "math.random(1, 10000)" in loadgen_wrk.lua_script("memcache")


def test_oha_json_gives_corrected_percentiles_and_errors_by_kind():
    r = loadgen_oha.parse((FIX / "oha-open.json").read_text(), target_rate=400, duration=2)
    assert r["latency_corrected"] is True
    raw = json.loads((FIX / "oha-open.json").read_text())
    assert r["latency_ms"]["p99"] == pytest.approx(raw["latencyPercentiles"]["p99"] * 1000, abs=0.001)
    assert r["latency_ms"]["max"] == pytest.approx(raw["summary"]["slowest"] * 1000, abs=0.001)
    assert r["errors"]["non_2xx"] == sum(v for k, v in raw["statusCodeDistribution"].items() if not k.startswith("2"))
    assert r["throughput_rps"] == pytest.approx(raw["summary"]["requestsPerSec"], abs=0.1)
    assert r["achieved_fraction"] == 1.0  # 800 answered of 400/s x 2 s


@pytest.mark.parametrize("message, kind", [
    ("connection error: Connection refused (os error 111)", "connect"),
    ("operation timed out", "timeout"),
    ("Connection reset by peer (os error 104)", "read"),
    ("Broken pipe (os error 32)", "write"),
    ("something new", "other"),
])
def test_oha_error_messages_are_classified(message, kind):
    assert loadgen_oha._error_kind(message) == kind


def test_oha_without_json_is_an_explained_failure():
    with pytest.raises(loadgen_oha.OhaOutputError):
        loadgen_oha.parse("error: invalid value", 100)


def test_backend_tools_outputs():
    assert calibrate.parse_redis_benchmark((FIX / "redis-benchmark.csv").read_text()) == 7788.16
    assert calibrate.parse_memcslap((FIX / "memcslap.txt").read_text()) == pytest.approx(2000 / 0.299)
    assert calibrate.parse_sysbench((FIX / "sysbench.txt").read_text()) == 3830.11
    assert calibrate.sleep_ceiling(256)["throughput_rps"] == 25600.0
