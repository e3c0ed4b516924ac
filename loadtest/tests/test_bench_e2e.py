"""A short real benchmark through the whole pipeline: verify, start pinned, prime, warm up, wrk,
oha, ceilings, /proc accounting, results.json, report.md and report.html. Seconds long; it proves
the pipeline works and records what it should. Speed is never asserted: the box may be busy."""
import dataclasses

import pytest
from conftest import first_available_stack

from harness.accounting import cpus
from harness.bench import run, settings
from harness.loadgen import oha as loadgen_oha
from harness.ports import free_port
from harness.reports import results

pytestmark = pytest.mark.e2e  # real servers, services or load: `pytest -m "not e2e"` leaves them out


@pytest.fixture
def bench_stack():
    # Its own port, so that it never collides with the copy the verifier's tests keep running.
    return dataclasses.replace(first_available_stack("to benchmark"), port=free_port("127.0.0.1"))


def test_a_short_real_bench_down_to_report_html(services_up, bench_stack, tmp_path):
    cfg = settings.Settings(concurrency=[8], duration=1, repeats=2, open_rates=[0.5] if loadgen_oha.binary() else [],
                            open_duration=1, warmup_min=1, warmup_max=2, calibration_duration=1,
                            endpoints=["hello", "redis"])
    out = run.Bench(cfg, cpus.Layout.from_env(), tmp_path / "run").run([bench_stack])
    doc = results.read(out)
    assert doc["complete"] and doc["git"]["commit"] and doc["machine"]["cpus"] >= 1
    (entry,) = doc["stacks"]
    assert entry["status"] == "benchmarked", entry.get("reason")
    assert entry["verify"]["ok"]
    ep = entry["endpoints"]["hello"]
    closed = ep["sweep"][0]
    assert closed["requests"] > 0 and sum(closed["errors"].values()) == 0
    assert closed["latency_ms"]["p50"] <= closed["latency_ms"]["p99"] <= closed["latency_ms"]["max"]
    stats = closed["stats"]
    assert stats["server_cpu_s"] > 0 and stats["generator_cpu_s"] > 0
    assert stats["memory"]["peak_rss_bytes"] > 0
    assert 0 <= stats["harness_cpu_share"] < 1
    assert ep["headline"]["throughput_rps"]["n"] == 2
    assert (out / closed["raw"]).read_text().startswith("$ taskset")
    if cfg.open_rates:
        (opened,) = ep["open_loop"]
        assert opened["latency_corrected"] and opened["requests"] > 0
    hello_ceiling = [c for c in doc["ceilings"] if c["endpoint"] == "hello"]
    assert hello_ceiling and hello_ceiling[0]["throughput_rps"] > 0
    # the data endpoint's ceiling, measured again beside its headline runs, is the one its share uses
    redis = entry["endpoints"]["redis"]
    beside = redis["adjacent_ceiling"]
    assert beside["tool"] == "redis-benchmark" and beside["connections"] == 8 and beside["throughput_rps"] > 0
    assert (out / beside["raw"]).read_text().startswith("$ taskset")
    assert beside["raw"] != next(c["raw"] for c in doc["ceilings"] if c["endpoint"] == "redis")
    sob = redis["share_of_bound"]
    assert sob["ceiling_source"] == "adjacent" and sob["ceiling_rps"] == beside["throughput_rps"]
    assert sob["start_ceiling_rps"] > 0 and sob["share"] > 0
    html = (out / "report.html").read_text()
    assert "<svg" in html and bench_stack.name in html
    assert (out / "report.md").read_text().count("| " + bench_stack.name) >= 2
    assert (tmp_path / "latest").resolve() == out.resolve()
