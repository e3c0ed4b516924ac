"""`make ab` end to end on a fake stack (abserver.py, whose speed BUSY_US sets): the real pinning,
golden cases, wrk, /proc accounting and ab.json, one-second runs, no warm-up. Run it alone on a
quiet machine (on a shared machine, under the lock that every job producing load there takes).

What the verdict promises and what these tests can assert:
- a known, large difference (400 µs of CPU spun per request against none: several times fewer
  requests per second and several times the CPU per request) is "real" on any machine that is not
  disturbed enough to reorder several-fold differences;
- identical sides are called "real" for one figure with a probability of at most 2 / C(2n, n)
  whatever the noise (stats.false_positive_bound: every rank order of exchangeable runs is equally
  likely and only 2 separate the sides), and less, since the medians must also be further apart
  than either side's range: at n = 5 rounds a side the bound is 0.8% per figure and a seeded
  simulation gives about 0.2% for normal noise (test_stats.py). The identical-pair test asserts the
  two figures the knob would move (req/s and CPU µs/req), so it fails by chance at most 1.6% of the
  time, about 0.4% for normal noise; a failure that repeats is a bug, not bad luck.
"""
import json
import pathlib
import shlex
import sys

import pytest

from harness import ab, stacks
from harness.accounting import cpus, stats
from harness.bench import knobs
from harness.ports import free_port
from harness.verify import golden

pytestmark = pytest.mark.e2e  # real servers, services or load: `pytest -m "not e2e"` leaves them out

TESTS = pathlib.Path(__file__).resolve().parent


@pytest.fixture
def fake_stack():
    return stacks.Stack(name="abserver", dir=TESTS, language="Python", framework="asyncio (abserver.py)",
                        port=free_port("127.0.0.1"), build="true",
                        run=f"exec {shlex.quote(sys.executable)} abserver.py", ready_timeout=15)


def run_ab(stack, out, a: str, b: str, rounds: int) -> dict:
    cfg = ab.AbSettings("abserver", "hello", knobs.parse_env(a, "A"), knobs.parse_env(b, "B"), rounds=rounds,
                        connections=16, duration=1, warmup_max=0)
    doc = ab.read(ab.Ab(cfg, stack, cpus.Layout.from_env(), out).run())
    print(ab.render_md(doc))  # shown when a test fails
    return doc


def test_a_big_known_difference_is_real(services_up, fake_stack, tmp_path):
    doc = run_ab(fake_stack, tmp_path / "ab", "", "BUSY_US=400", rounds=3)
    assert doc["complete"] and doc["refused"] is None
    assert [f"{r['side']}{r['round']}" for r in doc["rounds"]] == ["A1", "B1", "A2", "B2", "A3", "B3"]
    f = doc["summary"]["figures"]
    rps, cpu = f["throughput_rps"], f["cpu_us_per_request"]
    assert rps["word"] == stats.REAL and rps["better"] is False and rps["change_pct"] < -30, rps
    assert cpu["word"] == stats.REAL and cpu["better"] is False, cpu
    for r in doc["rounds"]:
        assert r["proof"] == f"{len(golden.golden_cases('hello'))} golden cases of /hello passed"
        assert r["figures"]["errors"] == 0 and r["figures"]["peak_rss_bytes"] > 0
        assert "steal_s" in r["closed"]["stats"] and "foreign_cpu_share" in r["closed"]["stats"]
        assert (tmp_path / "ab" / r["closed"]["raw"]).read_text().startswith("$ taskset")
    md = ab.render_md(doc)
    assert "**real difference**: B worse" in md and md.rstrip().endswith(doc["command"])
    assert "B=BUSY_US=400" in doc["command"]


def test_identical_sides_are_within_the_noise(services_up, fake_stack, tmp_path):
    doc = run_ab(fake_stack, tmp_path / "ab", "BUSY_US=50", "BUSY_US=50", rounds=5)
    f = doc["summary"]["figures"]
    for key in ("throughput_rps", "cpu_us_per_request"):
        assert f[key]["word"] == stats.NOISE, (key, f[key]["samples"], f[key]["why"])
    assert doc["summary"]["false_positive_bound"] == pytest.approx(2 / 252, abs=1e-4)
    assert "A and B are the same" in ab.render_md(doc)


def test_a_knob_that_breaks_the_contract_is_refused_not_measured(services_up, fake_stack, tmp_path):
    doc = run_ab(fake_stack, tmp_path / "ab", "", "GREETING=Howdy", rounds=2)
    assert doc["refused"].startswith("side B (GREETING=Howdy) breaks the contract on /hello, so it is not measured")
    assert "golden responses" in doc["refused"] and "Howdy" in doc["refused"]
    assert [r["side"] for r in doc["rounds"]] == ["A"]  # B was never loaded
    assert not doc["complete"]
    assert json.loads((tmp_path / "ab" / "ab.json").read_text())["refused"] == doc["refused"]
