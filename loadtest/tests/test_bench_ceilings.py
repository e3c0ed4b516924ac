"""How a backend's ceiling run is sized: probes that grow to the duration, or one run sized by a rate
measured before. The tool is a stand-in: nothing here runs redis-benchmark."""
from harness.accounting import measure
from harness.bench import calibrate


def _fake_redis_benchmark(monkeypatch, seconds_per_request: float) -> list:
    """redis-benchmark as a stand-in that 'takes' seconds_per_request per request; returns the -n of each run."""
    counts = []

    def fake_run(cmd, acct, timeout, sample_memory=True):
        n = int(cmd[cmd.index("-n") + 1])
        counts.append(n)
        rps = 1 / seconds_per_request
        return measure.ToolRun(cmd, 0, f'"test","rps"\n"GET greeting:__rand_int__","{rps:.2f}"\n', "",
                               n * seconds_per_request, {})
    monkeypatch.setattr(calibrate.shutil, "which", lambda tool: f"/usr/bin/{tool}")
    monkeypatch.setattr(calibrate.measure, "run", fake_run)
    return counts


def test_a_backend_ceiling_grows_its_request_count_until_a_run_lasts_half_the_duration(monkeypatch, tmp_path):
    counts = _fake_redis_benchmark(monkeypatch, 1e-5)  # 100,000 req/s
    rec = calibrate.backend_ceiling("redis", 16, 5.0, ["taskset", "-c", "0"], None, tmp_path)
    assert counts[0] == calibrate.PROBE_REQUESTS and len(counts) > 2  # probes first
    assert counts[-1] * 1e-5 >= 2.5 and rec["throughput_rps"] == 100000.0
    assert (tmp_path / "ceiling-redis-c16.txt").exists()


def test_a_rate_measured_before_sizes_the_first_run_to_the_duration(monkeypatch, tmp_path):
    counts = _fake_redis_benchmark(monkeypatch, 1e-5)
    rec = calibrate.backend_ceiling("redis", 16, 5.0, ["taskset", "-c", "0"], None, tmp_path,
                                    raw_name="s-ceiling-redis-c16.txt", expected_rps=90000.0)
    assert counts == [450000]  # one run of ~5 s, no probes
    assert rec["raw"] == "raw/s-ceiling-redis-c16.txt" and (tmp_path / "s-ceiling-redis-c16.txt").exists()
    # the machine got faster than the rate given: that run was too short, so it grows as before
    counts = _fake_redis_benchmark(monkeypatch, 1e-6)
    calibrate.backend_ceiling("redis", 16, 5.0, ["taskset", "-c", "0"], None, tmp_path, expected_rps=90000.0)
    assert counts[0] == 450000 and len(counts) == 2 and counts[-1] * 1e-6 >= 2.5
