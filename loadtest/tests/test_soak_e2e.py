"""`make soak` end to end on small servers made to misbehave (soakserver.py): one that leaks memory
steadily, one that stalls for a second every few seconds, and a well-behaved one. Each soak is real
(the harness's pinning, golden cases, oha windows, /proc accounting, results.json and report), only
short: 12 one-second windows at 400 req/s. Run them alone on a quiet machine (the project runs every
load-producing test, on a shared machine, under one lock that every such job takes).

What each proves: the leak and the stall are flagged with figures of the right size (a stall
blamed on the server where no window around it was disturbed: soaked again, up to three times, on a
machine that disturbed them all), the well-behaved server gets no flag at all; SIGINT in mid-soak keeps the windows measured so far (and
their report) and leaves no process of the soak behind; `make compare` reads two soaks.
"""
import os
import pathlib
import signal
import subprocess
import sys
import time

import psutil
import pytest

from harness import compare, soak, stacks
from harness.ports import free_port
from harness.soak import report as soak_report

pytestmark = pytest.mark.e2e  # real servers, services or load: `pytest -m "not e2e"` leaves them out

TESTS = pathlib.Path(__file__).resolve().parent
LOADTEST = TESTS.parent
RATE, WINDOWS = 400, 12


def soak_server(port: int | None = None) -> stacks.Stack:
    return stacks.Stack(name="soakserver", dir=TESTS, language="Python", framework="asyncio (soakserver.py)",
                        port=port or free_port("127.0.0.1"), build="true",
                        run=f"exec {sys.executable} soakserver.py", ready_timeout=15)


def soak_settings(env: dict, duration: float = WINDOWS) -> soak.SoakSettings:
    return soak.SoakSettings("soakserver", "hello", env, rate=RATE, duration=duration, window=1, connections=16,
                             warmup_max=0, progress_s=4, build=False)


def run(out: pathlib.Path, env: dict) -> dict:
    code = soak.run_soak(soak_settings(env), soak_server(), out)
    doc = soak.read(out)
    assert code == 0 and doc["complete"], (code, doc.get("refused"), doc.get("exited"))
    assert len(doc["windows"]) == WINDOWS and all((out / w["raw"]).exists() for w in doc["windows"])
    lead = doc["lead_in"]  # one window of the same load before window 0, recorded, not judged
    assert lead["t_s"] == -1 and lead["answered"] > 0 and (out / lead["raw"]).exists() and "lead-in" in lead["flags"]
    assert doc["verdicts"]["lead_in"]["window"]["i"] == -1
    assert (out / "report.html").read_text().count("<svg") == 4  # no GC chart: Python has no GC log here
    return doc


@pytest.fixture(scope="module")
def well(services_up, tmp_path_factory):
    out = tmp_path_factory.mktemp("soak") / "well"
    return out, run(out, {})


@pytest.fixture(scope="module")
def leaking(services_up, tmp_path_factory):
    out = tmp_path_factory.mktemp("soak") / "leak"
    return out, run(out, {"LEAK_MIB_PER_S": "8"})


def test_a_well_behaved_server_gets_no_flag(well):
    _, doc = well
    v = doc["verdicts"]
    assert v["flags"] == [], soak_report.render_md(doc)
    assert v["throughput"]["fraction"] >= 0.95 and v["errors"]["count"] == 0
    assert v["memory"]["leak"] is False and v["latency"]["stall"] is False
    assert v["gc"]["available"] is False and "no GC log" in v["gc"]["why"]
    assert all(w["rss_bytes"] > 0 and w["server_cpu_s"] > 0 for w in doc["windows"])


def test_a_leaking_server_is_flagged_with_its_rate(leaking):
    _, doc = leaking
    m = doc["verdicts"]["memory"]
    assert "leak" in doc["verdicts"]["flags"] and m["leak"]
    assert 0.5 * 8 * 3600 < m["slope_mib_per_h"] < 1.5 * 8 * 3600, m  # 8 MiB/s
    assert "stall" not in doc["verdicts"]["flags"]


STALL_ATTEMPTS = 3


@pytest.fixture(scope="module")
def stalling(services_up, tmp_path_factory):
    """Soaks of the stalling server, run again (up to STALL_ATTEMPTS in all) while every stall falls in
    or next to a window where the hypervisor or other processes took the machine: the verdict then
    rightly declines to blame the server (on this shared VM steal reached 0.9 s a second in the CI
    run of 2026-11-27 11:15, 11 of 12 windows disturbed)."""
    base, docs = tmp_path_factory.mktemp("soak"), []
    for attempt in range(1, STALL_ATTEMPTS + 1):
        docs.append(run(base / f"stall{attempt}", {"STALL_EVERY_S": "3", "STALL_MS": "1000"}))
        if docs[-1]["verdicts"]["latency"]["stall"]:
            break
    return docs


def test_a_stalling_server_is_flagged_where_it_stalled(stalling):
    for doc in stalling:  # whatever the machine did: the stalls are found, where they were
        lat = doc["verdicts"]["latency"]
        assert len(lat["stall_windows"]) >= 2 and lat["worst_window"]["max_ms"] >= 500, lat
        assert "leak" not in doc["verdicts"]["flags"]
        for i in lat["stall_windows"]:
            assert "stall" in doc["windows"][i]["flags"]


def test_a_stall_away_from_disturbance_is_blamed_on_the_server(stalling):
    doc = stalling[-1]
    lat, flags = doc["verdicts"]["latency"], doc["verdicts"]["flags"]
    if not lat["stall"]:
        # Every attempt disturbed: the verdict must say so, and this half is not checked on this machine.
        assert "disturbed-stall" in flags and lat["disturbed_stall_windows"] == lat["stall_windows"], lat
        steal = [w["steal_s"] for d in stalling for w in d["windows"]]
        pytest.skip(f"{len(stalling)} soak(s), each disturbed around every stall (steal up to {max(steal):.2f} s in a "
                    f"1 s window): the blame is checked by test_soak.py on recorded windows only this time")
    assert "stall" in flags and "disturbed-stall" not in flags
    own = [i for i in lat["stall_windows"] if i not in lat["disturbed_stall_windows"]]
    for i in own:  # blamed only where neither it nor a window next to it was disturbed
        assert not any("disturbed" in w["flags"] for w in doc["windows"][max(0, i - 1):i + 2]), (i, doc["windows"])


def test_compare_reads_two_soaks_and_names_the_leak(well, leaking):
    old, new = compare.load(well[0]), compare.load(leaking[0])
    rows = {r.label: r.status for r in compare.compare(old, new)["rows"]}
    assert rows["flag: leak"] == "regression" and rows["RSS over the second half, MiB"] == "regression"


DRIVER = '''
import pathlib, sys
sys.path.insert(0, sys.argv[1])
from harness import __main__ as cli
from harness import soak
import test_soak_e2e as t
cli.stop_like_ctrl_c_on_sigterm()
sys.exit(soak.run_soak(t.soak_settings({}, duration=60), t.soak_server(int(sys.argv[2])), pathlib.Path(sys.argv[3])))
'''


def test_sigint_keeps_what_was_measured_and_stops_every_process(services_up, tmp_path):
    out, port = tmp_path / "interrupted", free_port("127.0.0.1")
    # Started with SIGINT ignored, as a shell without job control starts a background job
    # (`nohup make soak ... &`, a CI script): the harness must still stop on it.
    proc = subprocess.Popen([sys.executable, "-c", DRIVER, str(TESTS), str(port), str(out)], cwd=LOADTEST,
                            env={**os.environ, "PYTHONPATH": str(LOADTEST)}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if len(soak.read(out)["windows"]) >= 4:
                    break
            except (OSError, ValueError):
                pass
            time.sleep(0.2)
        else:
            raise AssertionError("the soak measured no 4 windows within 30 s")
        os.kill(proc.pid, signal.SIGINT)
        output, _ = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, output
    doc = soak.read(out)
    assert doc["interrupted"] and not doc["complete"] and 4 <= len(doc["windows"]) < 60
    assert doc["verdicts"]["windows"] == len(doc["windows"])
    assert "Interrupted after" in (out / "report.html").read_text() and "interrupted" in output
    time.sleep(0.5)
    left = [p for p in psutil.process_iter(["pid", "name", "cmdline", "create_time"])
            if str(p.info["pid"]) in doc["processes"]
            and abs(p.info["create_time"] - doc["processes"][str(p.info["pid"])]) < 0.5
            or (p.info["name"] == "oha" and f":{port}/" in " ".join(p.info["cmdline"] or []))]
    assert not left, [p.info for p in left]
