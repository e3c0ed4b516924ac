"""A short benchmark of one stack across simulated hosts: four network namespaces joined by veth
links to a bridge, each with its own sshd and keys made for the test (simhosts.py), driven over
OpenSSH exactly as real hosts are. The server, the backends and two client hosts each have their
own; nothing between roles crosses loopback. Speed is never asserted: the box may be busy."""
import os
import shutil
import signal
import subprocess
import sys
import threading
import time

import pytest
from conftest import first_available_stack

from harness import hosts
from harness.bench import settings
from harness.config import ROOT
from harness.hosts import multihost, simulated as simhosts
from harness.loadgen import merge, wrk as loadgen_wrk
from harness.reports import results

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("ip") or not os.path.exists("/usr/sbin/sshd"),
                                 reason="simulated hosts need root, iproute2 and sshd (make setup installs them)")]


@pytest.fixture(scope="module")
def sim_hosts():
    line = simhosts.up()
    yield dict(kv.split("=", 1) for kv in line.split())
    simhosts.down()


@pytest.fixture
def across(sim_hosts, monkeypatch):
    """The environment of `make bench-all` pointed at the simulated hosts; returns the roles."""
    for k, v in sim_hosts.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("HOSTS_CHECKOUT", str(ROOT))
    for k in ("EXTERNAL_SERVICES", "SERVER_ADDR", "BACKEND_ADDR"):
        monkeypatch.delenv(k, raising=False)
    return hosts.roles_from_env(all_services_external=False)


@pytest.fixture
def stack():
    return first_available_stack("to benchmark across hosts")


def counters():
    return {h.role: simhosts.link_counters(h) for h in simhosts.hosts()}


def cmdline(pid: int) -> list[str]:
    """A process's command line; [""] when it exited after it was listed."""
    try:
        return open(f"/proc/{pid}/cmdline").read().split("\0")
    except OSError:
        return [""]


def only_sshd_left() -> dict:
    """role -> the processes left in its namespace other than its sshd (none, when all was stopped)."""
    out = {}
    for h in simhosts.hosts():
        sshd = int((simhosts.STATE / h.role / "sshd.pid").read_text())
        out[h.role] = [p for p in simhosts.processes(h) if p != sshd]
    return out


def pooled_p99(run_dir, record) -> float:
    """The p99 of the client hosts' histograms as their raw outputs kept them, added together."""
    histograms = [loadgen_wrk.parse_histogram((run_dir / h["raw"]).read_text()) for h in record["per_host"]
                  if "dropped" not in h]
    return merge.percentile(merge.add_histograms(histograms), 99) / 1000


def test_a_short_bench_across_simulated_hosts_merges_both_clients_and_stops_everything(across, stack, tmp_path):
    cfg = settings.Settings(concurrency=[8], duration=2, repeats=1, open_rates=[0.5], open_duration=2,
                            warmup_min=1, warmup_max=1, endpoints=["hello", "redis"])
    before = counters()
    out = multihost.MultiHostBench(cfg, across, tmp_path / "run").run([stack])
    after = counters()
    doc = results.read(out)
    assert doc["complete"], doc
    (entry,) = doc["stacks"]
    assert entry["status"] == "benchmarked", entry.get("reason")
    # Verified before any load, from a client host, across the network.
    assert entry["verify"]["ok"] and entry["verify"]["passed"] >= 10, entry["verify"]
    assert set(doc["hosts"]) == {"server", "backend", "client1", "client2"}
    assert doc["mysql_thread_handling"] == "pool-of-threads"  # read on the backend host
    assert doc["hosts"]["server"]["address"] == simhosts.hosts()[0].address
    assert doc["network"]["rtt"]["client1->server"]["median_ms"] > 0
    assert doc["network"]["bandwidth"]["gbit_per_s"] > 0
    requests = 0
    for endpoint in ("hello", "redis"):
        ep = entry["endpoints"][endpoint]
        (closed,) = ep["sweep"]
        assert [h["host"] for h in closed["per_host"]] == ["client1", "client2"]
        assert all("dropped" not in h for h in closed["per_host"]) and closed["merged_from"] == 2
        # Merged exactly: the counts add up, the percentiles are the pooled histograms'.
        assert closed["requests"] == sum(h["requests"] for h in closed["per_host"]) > 0
        assert closed["throughput_rps"] == round(sum(h["throughput_rps"] for h in closed["per_host"]), 1)
        assert closed["latency_ms"]["p99"] == pooled_p99(out, closed)
        assert sum(closed["errors"].values()) == 0
        assert closed["server_host"]["tree_cpu_s"] > 0
        (opened,) = ep["open_loop"]
        assert opened["merged_from"] == 2 and opened["latency_corrected"]
        # Settled before each run, seen from a client host, as the one-box run does (bench/endpoint.py).
        assert closed["settle_s"] >= 0 and opened["settle_s"] >= 0
        assert opened["requests"] == sum(h["requests"] for h in opened["per_host"]) > 0
        requests += closed["requests"] + opened["requests"]
    assert entry["endpoints"]["redis"]["sweep"][0]["backend_host"]["tree_cpu_s"] > 0
    # The backend's own tool beside the headline, from the server host across the backend's link.
    ceiling = entry["endpoints"]["redis"]["adjacent_ceiling"]
    assert ceiling["host"] == "server" and ceiling["tool"] == "redis-benchmark" and ceiling["throughput_rps"] > 0
    assert "GET" in (out / ceiling["raw"]).read_text() and "adjacent_ceiling" not in entry["endpoints"]["hello"]
    # The traffic crossed the links: the server's link received at least every request's bytes
    # ("GET /hello HTTP/1.1" and a Host line alone are over 40), each client's sent its share,
    # and the backend's carried the /redis queries.
    grew = {role: {k: after[role][k] - before[role][k] for k in after[role]} for role in after}
    assert grew["server"]["rx_bytes"] > requests * 40
    assert grew["client1"]["tx_bytes"] > 0 and grew["client2"]["tx_bytes"] > 0
    assert grew["backend"]["rx_bytes"] > entry["endpoints"]["redis"]["sweep"][0]["requests"] * 10
    # Everything the run started, on every host, was stopped: only each host's sshd is left.
    assert only_sshd_left() == {h.role: [] for h in simhosts.hosts()}
    report = (out / "report.md").read_text()
    assert "## Hosts" in report and "sim-client2" in report and "## Network" in report
    assert "MariaDB thread handling: `pool-of-threads`" in report


def test_a_client_host_that_drops_out_is_reported_and_the_others_results_are_kept(across, stack, tmp_path):
    cfg = settings.Settings(concurrency=[8], duration=3, repeats=1, open_rates=[], warmup_min=1, warmup_max=1,
                            endpoints=["hello"])
    client2 = next(h for h in simhosts.hosts() if h.role == "client2")
    killed = threading.Event()

    def pull_the_plug():
        """Once client2's wrk of the measured level runs (3 s, not the 1 s warm-up), kill every
        process on that host, its sshd included: the host is gone, as a crashed machine is."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed.is_set():
            for pid in simhosts.processes(client2):
                argv = cmdline(pid)
                if argv[0].endswith("wrk") and "-d3s" in argv:
                    time.sleep(1)
                    for p in simhosts.processes(client2):
                        os.kill(p, signal.SIGKILL)
                    killed.set()
                    return
            time.sleep(0.05)

    plug = threading.Thread(target=pull_the_plug, daemon=True)
    plug.start()
    try:
        out = multihost.MultiHostBench(cfg, across, tmp_path / "run").run([stack])
    finally:
        killed.set()
        plug.join()
        left = only_sshd_left()  # before client2 is made again (that restarts every host)
        simhosts.up()
    doc = results.read(out)
    (entry,) = doc["stacks"]
    assert entry["status"] == "benchmarked", entry.get("reason")
    (closed,) = entry["endpoints"]["hello"]["sweep"]
    by_host = {h["host"]: h for h in closed["per_host"]}
    assert "dropped" in by_host["client2"] and "dropped" not in by_host["client1"]
    assert "client-dropped@client2" in closed["flags"]
    # client1's measurement is whole: the merged result is exactly its own.
    assert closed["merged_from"] == 1
    assert closed["requests"] == by_host["client1"]["requests"] > 0
    assert closed["latency_ms"]["p99"] == by_host["client1"]["latency_ms"]["p99"]
    assert "client-dropped" in (out / "report.md").read_text()
    assert left == {h.role: [] for h in simhosts.hosts()}


def test_a_host_that_does_not_share_the_checkout_gets_a_copy_over_ssh(across, monkeypatch, tmp_path):
    client = across.clients[0]
    assert hosts.shares_this_checkout(client)  # HOSTS_CHECKOUT is this directory (the across fixture)
    monkeypatch.setenv("HOSTS_CHECKOUT", str(tmp_path / "copy"))
    assert not hosts.shares_this_checkout(client)
    hosts.ship_checkout(client)
    copy = tmp_path / "copy"
    assert (copy / "Makefile").read_bytes() == (ROOT / "Makefile").read_bytes()
    assert (copy / "loadtest" / "harness" / "hosts" / "remote.py").read_bytes() == \
        (ROOT / "loadtest" / "harness" / "hosts" / "remote.py").read_bytes()
    # What git ignores stays behind: the host builds and runs its own.
    assert not (copy / ".venv").exists() and not (copy / ".run").exists() and not (copy / "results").exists()


def test_ctrl_c_mid_level_stops_everything_on_every_host(across, stack, tmp_path):
    """A Ctrl-C while the client hosts' generators run: the harness exits, and nothing it started is
    left on any host, long before the level would have ended by itself (the generators are tied to
    their ssh connections and hung up; the stack and the services are stopped on the way out). Untied,
    the run waited for its generators to finish and the test failed."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "loadtest"), "RESULTS_DIR": str(tmp_path),
           "STACK": stack.name, "ENDPOINT": "hello", "CONCURRENCY": "8", "DURATION": "60", "REPEATS": "1",
           "OPEN_RATES": "", "WARMUP_MAX": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "harness", "bench"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    client1 = next(h for h in simhosts.hosts() if h.role == "client1")
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and proc.poll() is None:
            if any(c[0].endswith("wrk") and "-d60s" in c for c in map(cmdline, simhosts.processes(client1))):
                level_ends = time.monotonic() + 60
                break
            time.sleep(0.1)
        else:
            pytest.fail(f"the measured level never started:\n{proc.communicate(timeout=60)[0][-3000:]}")
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends: the whole foreground group
        out = proc.communicate(timeout=120)[0]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, out[-3000:]
    # A hang-up reaches a remote process a moment after its connection ends: wait for it, but not
    # for the level's end, when the generators would have stopped by themselves.
    nothing_left = {h.role: [] for h in simhosts.hosts()}
    while time.monotonic() < level_ends - 10 and only_sshd_left() != nothing_left:
        time.sleep(0.2)
    assert time.monotonic() < level_ends - 10, "the run ended only when its generators would have stopped anyway"
    assert only_sshd_left() == nothing_left, out[-3000:]
