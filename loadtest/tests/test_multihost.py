"""Multi-host runs without hosts: the exact merge of several clients' results, how connections
and rates are split, and how the host settings are read."""
import json
import pathlib
import sqlite3

import pytest

from harness import hosts
from harness.hosts import multihost, on_host
from harness.loadgen import merge, oha as loadgen_oha, wrk as loadgen_wrk

FIXTURES = pathlib.Path(__file__).parent / "fixtures"


def wrk_fixture():
    out = (FIXTURES / "wrk-histogram.txt").read_text()
    parsed = loadgen_wrk.parse(out)
    parsed["histogram"] = loadgen_wrk.parse_histogram(out)
    parsed["stdout"] = out
    return parsed


def test_one_hosts_histogram_gives_back_the_percentiles_wrk_printed():
    part = wrk_fixture()
    for q, key in ((50, "p50"), (90, "p90"), (99, "p99"), (99.9, "p99.9")):
        assert merge.percentile(part["histogram"], q) / 1000 == part["latency_ms"][key]
    merged = merge.closed([part])
    assert {k: merged["latency_ms"][k] for k in ("p50", "p90", "p99", "p99.9", "max")} == \
        {k: part["latency_ms"][k] for k in ("p50", "p90", "p99", "p99.9", "max")}
    assert merged["requests"] == part["requests"] and merged["throughput_rps"] == part["throughput_rps"]


def test_two_hosts_add_up_and_their_percentiles_come_from_the_pooled_histogram():
    fast, slow = wrk_fixture(), wrk_fixture()
    # The second host saw every latency ten times longer (a farther or busier client).
    slow["histogram"] = [(v * 10, c) for v, c in slow["histogram"]]
    slow["latency_ms"] = {**slow["latency_ms"], "max": slow["latency_ms"]["max"] * 10}
    merged = merge.closed([fast, slow])
    assert merged["requests"] == fast["requests"] + slow["requests"]
    assert merged["throughput_rps"] == round(fast["throughput_rps"] + slow["throughput_rps"], 1)
    assert merged["errors"]["non_2xx"] == fast["errors"]["non_2xx"] + slow["errors"]["non_2xx"]
    pooled = sorted(fast["histogram"] + slow["histogram"])
    assert merged["latency_ms"]["p99"] == merge.percentile(pooled, 99) / 1000
    # Half the requests are slow, so the pooled median lies among the slow ones' low end: not the
    # mean of the two medians, which is what averaging per-host percentiles would report.
    mean_of_medians = (fast["latency_ms"]["p50"] + fast["latency_ms"]["p50"] * 10) / 2
    assert merged["latency_ms"]["p50"] != pytest.approx(mean_of_medians, rel=0.05)
    assert merged["merged_from"] == 2
    # Requests per wall-clock second add up second by second.
    assert sum(merged["per_second_rps"]) == 2 * sum(fast["per_second_rps"])


def test_a_dropped_host_is_left_out_of_the_merge_and_none_left_is_a_failure():
    part = wrk_fixture()
    merged = merge.closed([part, {"failure": "exit 255: connection closed"}])
    assert merged["requests"] == part["requests"] and merged["merged_from"] == 1
    assert merge.closed([{"failure": "gone"}])["throughput_rps"] is None


def test_ohas_per_request_database_gives_back_the_percentiles_oha_printed(tmp_path):
    durations = [int(x) for x in (FIXTURES / "oha-db-durations-ns.txt").read_text().split()]
    # The database as oha 1.16 writes it (its schema), read back the way a client host reads it.
    db = tmp_path / "oha.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE oha (url TEXT NOT NULL, start REAL NOT NULL, start_latency_correction REAL, "
                     "end REAL NOT NULL, duration REAL NOT NULL, status INTEGER NOT NULL, len_bytes INTEGER NOT NULL, "
                     "run INTEGER NOT NULL)")
        conn.executemany("INSERT INTO oha VALUES ('/hello', 0, 0, 0, ?, 200, 2, 1)", [(d / 1e9,) for d in durations])
    assert on_host.oha_durations_ns(str(db)) == durations
    assert not db.exists()  # read once, then removed: a run's databases do not pile up
    raw = (FIXTURES / "oha-db-run.json").read_text()
    printed = json.loads(raw)["latencyPercentiles"]
    for q in merge.OHA_PERCENTILES:
        assert merge.oha_percentile(durations, float(q)) == round(printed[f"p{q}"] * 1e9)
    part = {**loadgen_oha.parse(raw, 600, 1), "durations_ns": durations}
    merged = merge.open_loop([part], 600, 1)
    assert merged["latency_ms"]["p99"] == part["latency_ms"]["p99"]
    assert merged["achieved_fraction"] == part["achieved_fraction"]
    # Two hosts at half the rate each: the pooled latencies, the whole rate.
    two = merge.open_loop([part, part], 1200, 1)
    assert two["requests"] == 2 * part["requests"] and two["achieved_fraction"] == part["achieved_fraction"]
    assert two["latency_ms"]["p99"] == part["latency_ms"]["p99"]


@pytest.mark.parametrize("connections, parts, shares", [(16, 2, [8, 8]), (5, 2, [3, 2]), (1, 2, [1]), (64, 3, [22, 21, 21])])
def test_connections_are_split_as_evenly_as_can_be_and_never_to_zero(connections, parts, shares):
    assert multihost.split(connections, parts) == shares


def test_host_settings_are_checked_before_anything_starts(monkeypatch):
    for k in ("SERVER_HOST", "BACKEND_HOST", "CLIENT_HOSTS", "SERVER_ADDR", "BACKEND_ADDR"):
        monkeypatch.delenv(k, raising=False)
    assert not hosts.configured()
    monkeypatch.setenv("SERVER_HOST", "root@a")
    assert hosts.configured()
    with pytest.raises(hosts.HostError, match="CLIENT_HOSTS.*BACKEND_HOST"):
        hosts.roles_from_env(all_services_external=False)
    monkeypatch.setenv("CLIENT_HOSTS", "c1, root@a")
    with pytest.raises(hosts.HostError, match="also a client host"):
        hosts.roles_from_env(all_services_external=True)
    monkeypatch.setenv("CLIENT_HOSTS", "c1,c1")
    with pytest.raises(hosts.HostError, match="twice"):
        hosts.roles_from_env(all_services_external=True)
    monkeypatch.setenv("CLIENT_HOSTS", "c1,c2")
    roles = hosts.roles_from_env(all_services_external=True)
    assert roles.backend is None and [c.role for c in roles.clients] == ["client1", "client2"]
    monkeypatch.setenv("BACKEND_HOST", "b")
    monkeypatch.setenv("BACKEND_ADDR", "10.0.0.9")
    roles = hosts.roles_from_env(all_services_external=False)
    assert roles.backend.address == "10.0.0.9"  # given: not asked of ssh


def test_a_remote_command_line_quotes_what_it_passes():
    assert hosts.env_line({"MYSQL_PASSWORD": "it's $x"}) == "env 'MYSQL_PASSWORD=it'\"'\"'s $x'"
    assert hosts.line("cat", "a b") == "cat 'a b'"
