"""Settings from the environment, the CPU layout, and the time budget computed before a run."""
import pytest

from harness.accounting import cpus
from harness.bench import box, plan, settings
from harness.reports import results


def test_defaults_fit_the_budget_for_seven_stacks():
    full = plan.estimate(settings.Settings.from_env({}), stacks=7)
    quick = plan.estimate(settings.Settings.from_env({"QUICK": "1"}), stacks=7)
    # about an hour: the endpoint sweep took 59.6 min, the default load profiles add 2.8
    assert full["total_s"] <= 63 * 60, full
    assert quick["total_s"] <= 10 * 60, quick


def test_a_profile_alone_skips_the_sweep_and_costs_its_own_runs():
    alone = settings.Settings.from_env({"PROFILE": "many"})
    assert alone.profiles == ["many"] and not alone.sweep and not alone.calibrate
    assert alone.endpoints == ["hello", "redis", "sleep"]
    assert plan.profile_seconds(alone) == 6 * (alone.profile_duration + plan.TOOL_OVERHEAD_S)
    assert settings.Settings.from_env({"PROFILE": "none"}).profiles == []
    assert settings.Settings.from_env({}).profiles == ["churn", "pipeline", "noisy"]
    with pytest.raises(SystemExit):
        settings.Settings.from_env({"PROFILE": "storm"})


def test_environment_overrides():
    s = settings.Settings.from_env({"CONCURRENCY": "8, 32", "DURATION": "3", "REPEATS": "5", "OPEN_RATES": "",
                                    "ENDPOINT": "hello,sleep", "STACK": "x"})
    assert (s.concurrency, s.duration, s.repeats, s.open_rates, s.endpoints, s.stacks) == \
        ([8, 32], 3.0, 5, [], ["hello", "sleep"], "x")
    with pytest.raises(SystemExit, match="unknown"):
        settings.Settings.from_env({"ENDPOINT": "nope"})


@pytest.mark.parametrize("available, server, loadgen, backends", [
    ([0], [0], [0], [0]),
    ([0, 1], [0], [1], [1]),
    (list(range(8)), [0, 1, 2, 3], [4, 5], [6, 7]),
])
def test_default_cpu_layouts(available, server, loadgen, backends):
    assert cpus.default_layout(available) == {"server": server, "loadgen": loadgen, "backends": backends}


def test_cpu_lists():
    assert cpus.parse_list("0-2,5, 7") == [0, 1, 2, 5, 7]
    assert cpus.format_list([3, 1]) == "1,3"
    lay = cpus.Layout.from_env({"CPUS_SERVER": "0"})
    assert lay.server == [0] and lay.source.startswith("environment")


def test_knee():
    assert results.knee([(16, 50), (64, 95), (256, 100), (1024, 80)]) == 64
    assert results.knee([]) is None


def test_closed_loop_sweeps_then_repeats_the_best_level():
    rates = {16: 50.0, 64: 95.0, 256: 100.0, 1024: 80.0}
    calls = []

    def run(c, repeat):
        calls.append((c, repeat))
        rps = rates[c] + (repeat or 0)
        return {"connections": c, "throughput_rps": rps, "cpu_us_per_request": 10.0, "flags": ["x"] if repeat else []}

    out = results.closed_loop([16, 64, 256, 1024], 3, run)
    assert calls == [(16, None), (64, None), (256, None), (1024, None), (256, 1), (256, 2)]
    assert (out["knee_connections"], out["peak_connections"]) == (64, 256)
    assert results.open_loop_connections(out) == 64
    assert [r["throughput_rps"] for r in out["repeats"]] == [101.0, 102.0]
    assert out["headline"]["connections"] == 256 and out["headline"]["throughput_rps"]["median"] == 101.0
    assert out["headline"]["flags"] == ["x"] and out["open_loop"] == []
    assert results.closed_loop([16], 1, run)["repeats"] == []


def test_port_offset_moves_every_stack():
    from harness import stacks
    found = stacks.discover()
    moved = settings.with_port_offset(found, {"BENCH_PORT_OFFSET": "406"})
    assert [m.port for m in moved] == [s.port + 406 for s in found]
    assert settings.with_port_offset(found, {}) == found


def test_one_benchmark_at_a_time_per_run_dir():
    with box.exclusive():
        with pytest.raises(SystemExit, match="another benchmark is running"):
            with box.exclusive():
                pass
