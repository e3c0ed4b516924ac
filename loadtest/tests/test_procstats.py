"""procstats (through psutil) gives the figures /proc itself gives, on a live process tree.

Each figure is read a second way, straight from /proc as the harness did before psutil, and the
two must agree: the CPU seconds of a busy process (read before and after, psutil's in between),
RSS and PSS, descriptors, the tree (session members whose parent exited, a child that called
setsid itself), the machine's CPU time."""
import os
import pathlib
import subprocess
import time

import pytest

from harness.accounting import procstats

CLK_TCK = os.sysconf("SC_CLK_TCK")


def proc_cpu_seconds(pid: int) -> float:
    raw = pathlib.Path(f"/proc/{pid}/stat").read_text()
    f = raw[raw.rindex(")") + 2:].split()
    return (int(f[11]) + int(f[12])) / CLK_TCK


def proc_rss_pss(pid: int) -> tuple[int, int]:
    fields = dict(line.split(":", 1) for line in pathlib.Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:])
    return int(fields["Rss"].split()[0]) * 1024, int(fields["Pss"].split()[0]) * 1024


@pytest.fixture
def session(tmp_path):
    """bash in its own session: a busy python holding 64 MiB, an orphan (its parent exited), and a
    child that left the session with setsid; every member is listed in the pid file once up."""
    pidfile = tmp_path / "pids"
    script = f"""
python3 -c "import pathlib, time; x = bytearray(64 << 20); pathlib.Path('{pidfile}.ready').touch(); t = time.time()
while time.time() - t < 30: pass" & busy=$!
(sleep 30 & echo $! > {pidfile}.orphan; exit 0)
setsid sleep 30 & detached=$!
echo "$busy $detached" > {pidfile}.tmp && mv {pidfile}.tmp {pidfile}
wait
"""
    p = subprocess.Popen(["bash", "-c", script], start_new_session=True)
    deadline = time.monotonic() + 10
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    busy, detached = map(int, pidfile.read_text().split())
    orphan = int(pathlib.Path(f"{pidfile}.orphan").read_text())
    while not pathlib.Path(f"{pidfile}.ready").exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # the busy process has touched its 64 MiB (a loaded machine starts python slowly)
    while proc_cpu_seconds(busy) < 0.15 and time.monotonic() < deadline:
        time.sleep(0.05)  # and has been busy for a while, so that its CPU seconds say something
    yield p.pid, busy, detached, orphan
    for pid in (detached, orphan):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    os.killpg(p.pid, 9)
    p.wait()


def test_the_tree_holds_the_session_its_orphans_and_a_child_that_left_it(session):
    root, busy, detached, orphan = session
    # what makes the two cases: the orphan's parent is gone (it was re-parented away from the tree),
    # the detached child has a session of its own
    assert int(pathlib.Path(f"/proc/{orphan}/stat").read_text().rsplit(")", 1)[1].split()[1]) not in (root, busy)
    assert os.getsid(orphan) == root and os.getsid(detached) == detached
    members = procstats.tree(root)
    assert {root, busy, detached, orphan} <= set(members)
    assert os.getpid() not in members


def test_cpu_seconds_agree_with_proc_stat(session):
    _, busy, _, _ = session
    before = proc_cpu_seconds(busy)
    ours = procstats.cpu_seconds(busy)
    snapshot = procstats.processes()
    after = proc_cpu_seconds(busy)
    # psutil divides user and system time by the tick rate separately, so the sums may differ in
    # the last bit of a float from (user + system) / ticks.
    close = 1e-9
    assert before - close <= ours <= after + close and before - close <= snapshot[busy].cpu_s <= after + close
    assert after > 0.1  # it was busy: the comparison compared something
    assert procstats.cpu_seconds(2 ** 22 + 1) == 0.0  # no such process


def test_memory_agrees_with_smaps_rollup(session):
    _, busy, _, _ = session
    rss, pss = procstats.memory_bytes(busy)
    proc_rss, proc_pss = proc_rss_pss(busy)
    assert rss >= 64 << 20
    assert abs(rss - proc_rss) <= 64 * 4096 and abs(pss - proc_pss) <= 64 * 4096  # a few pages may move between reads
    assert procstats.memory_bytes(2 ** 22 + 1) == (0, 0)


def test_descriptors_agree_with_proc_fd(session):
    root, busy, _, _ = session
    assert procstats.open_descriptors([root, busy]) == sum(len(os.listdir(f"/proc/{p}/fd")) for p in (root, busy))
    assert procstats.open_descriptors([2 ** 22 + 1]) == 0


def test_machine_cpu_time_agrees_with_proc_stat():
    def proc_stat():
        vals = [int(v) for v in pathlib.Path("/proc/stat").read_text().splitlines()[0].split()[1:9]]
        return (sum(vals) - vals[3] - vals[4]) / CLK_TCK, vals[7] / CLK_TCK, sum(vals) / CLK_TCK
    before = proc_stat()
    busy, steal, total, per_cpu = procstats.machine_cpu_seconds()
    after = proc_stat()
    assert before[0] <= busy + 1e-6 and busy <= after[0] + 1e-6
    assert before[1] <= steal + 1e-6 and steal <= after[1] + 1e-6
    assert before[2] <= total + 1e-6 and total <= after[2] + 1e-6
    assert len(per_cpu) == os.cpu_count()
    assert sum(t for _, t in per_cpu.values()) == pytest.approx(total, rel=0.01)


def test_thread_states_of_a_stopped_process(session):
    _, busy, _, _ = session
    os.kill(busy, 19)  # SIGSTOP
    try:
        deadline = time.monotonic() + 5
        while procstats.thread_states(busy) != ["T"] and time.monotonic() < deadline:
            time.sleep(0.01)
        assert procstats.thread_states(busy) == ["T"]
    finally:
        os.kill(busy, 18)  # SIGCONT
