"""The flags that say a number is not the server's: a saturated generator, a disturbed machine.

The accounting is fed the CPU figures of real runs recorded on this 2-core machine (the raw
stats blocks of results.json), so the thresholds are exercised on numbers /proc really gave."""
import pytest

from harness import procstats
from harness.bench import measure

ACCT = measure.Accounting(server_root=None, server_cpus=[0], loadgen_cpus=[1])


def stats(**kw):
    base = dict(wall=10.0, server_cpu=9.0, known_cpu={"redis": 2.0}, generator_cpu=5.0, harness_cpu=0.1,
                busy_s=16.2, capacity_s=20.0, per_cpu_busy={0: 0.9, 1: 0.7}, acct=ACCT)
    base.update(kw)
    return measure.account(**base)


def test_a_quiet_run_is_not_flagged():
    s = stats()
    assert s["foreign_cpu_s"] == pytest.approx(0.1)
    assert s["generator_cpu_share"] == 0.5
    assert measure.flags(s, generator_max=0.9, foreign_max=0.1) == []


def test_a_generator_using_its_whole_core_is_flagged_saturated():
    s = stats(generator_cpu=9.6, busy_s=20.0)
    assert s["generator_cpu_share"] == 0.96
    assert measure.flags(s, 0.9, 0.1) == ["generator-saturated"]


def test_cpu_nobody_known_used_is_foreign_and_flags_the_run_disturbed():
    # recorded: 2.147 s of wrk against a stack while others compiled Java on the box
    s = measure.account(2.147, 0.47, {"redis": 0.0, "mysql": 0.0, "memcache": 0.0}, 0.515, 0.013, 4.32, 4.32,
                        {0: 1.0, 1: 1.0}, ACCT)
    assert s["foreign_cpu_share"] == pytest.approx(0.769, abs=0.001)
    assert s["harness_cpu_share"] < 0.01
    assert measure.flags(s, 0.9, 0.1) == ["disturbed"]


def test_known_processes_never_make_foreign_negative():
    assert stats(busy_s=10.0)["foreign_cpu_s"] == 0.0


def test_memory_summary_peak_and_steady():
    samples = [(0, 10, 5), (0.5, 50, 20), (1, 30, 15), (1.5, 32, 16), (2, 31, 15)]
    m = procstats.summarize_memory(samples)
    assert m["peak_rss_bytes"] == 50 and m["steady_rss_bytes"] == 31 and m["peak_pss_bytes"] == 20


def test_process_tree_includes_the_session_and_descendants():
    import os
    import subprocess
    import time
    p = subprocess.Popen(["bash", "-c", "sleep 30 & sleep 30 & wait"], start_new_session=True)
    try:
        time.sleep(0.3)
        members = procstats.tree(p.pid)
        assert p.pid in members and len(members) == 3
        assert os.getpid() not in members
    finally:
        os.killpg(p.pid, 9)
        p.wait()
