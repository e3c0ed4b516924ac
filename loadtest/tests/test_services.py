"""The real backing services: lifecycle, seeding, and the counters the verifier relies on."""
import os
import pathlib

import pymysql
import pytest
import redis as redislib

from harness import contract, ports, services
from harness.services import backends, local

pytestmark = pytest.mark.e2e  # real servers, services or load: `pytest -m "not e2e"` leaves them out


def test_a_second_start_is_a_no_op(services_up):
    for name in ("redis", "mysql", "memcache"):
        pid = services.pid(name)
        assert services.start(name, quiet=True) == "running"
        assert services.pid(name) == pid


def test_stale_pid_file_and_occupied_port_get_a_clear_message(services_up):
    pidfile = local._pidfile("redis")
    real = pidfile.read_text()
    pidfile.write_text("999999\n")  # a process that does not exist
    try:
        with pytest.raises(services.ServiceError, match="already in use by a process this project did not start"):
            services.start("redis", quiet=True)
        assert not pidfile.exists(), "the stale pid file was removed"
    finally:
        pidfile.write_text(real)
    assert services.status("redis").startswith("running")


def test_seed_is_idempotent_and_complete(services_up):
    for name in ("redis", "mysql", "memcache"):
        backends.seed(name)
    g = contract.greetings()
    r = backends.Redis()
    assert r.client.get("greeting:42").decode() == g[42]
    assert r.client.get("greeting:10000").decode() == g[10000]
    assert r.client.get("greeting:10001") is None
    m = backends.Mysql()
    with m.conn.cursor() as cur:
        cur.execute("SELECT COUNT(*), MIN(id), MAX(id) FROM greeting")
        assert cur.fetchone() == (10000, 1, 10000)
        cur.execute("SELECT message FROM greeting WHERE id = 42")
        assert cur.fetchone()[0] == g[42], "the 4-byte emoji survives the utf8mb4 path"
    mc = backends.Memcache()
    assert mc.client.get("greeting:9").decode() == g[9]
    for c in (r, m, mc):
        c.close()


def test_each_counter_moves_by_one_per_read(services_up):
    """The verifier's read counts are only as good as these counters."""
    r, m, mc = backends.Redis(), backends.Mysql(), backends.Memcache()
    before = r.reads(), m.reads(), mc.reads()
    r.client.get("greeting:1")
    mc.client.get("greeting:1")
    with m.conn.cursor() as cur:
        cur.execute("SELECT id, message FROM greeting WHERE id = %s", (1,))
    after = r.reads(), m.reads(), mc.reads()
    assert [a - b for a, b in zip(after, before)] == [1, 1, 1]
    for c in (r, m, mc):
        c.close()


def test_mariadb_runs_its_thread_pool(services_up):
    """The benchmark's MariaDB serves every connection from its thread pool (README, "Backing services")."""
    if services.pid("mysql") is None:
        pytest.skip("MariaDB is external here: not started by this project")
    m = backends.Mysql()
    try:
        assert m.thread_handling() == "pool-of-threads"
    finally:
        m.close()


def test_an_unknown_thread_handling_is_refused_with_the_choices(monkeypatch):
    monkeypatch.setenv("MARIADB_THREAD_HANDLING", "threads")
    with pytest.raises(services.ServiceError, match="pool-of-threads, one-thread-per-connection, not 'threads'"):
        services.mariadb_thread_handling()
    monkeypatch.setenv("MARIADB_THREAD_HANDLING", "one-thread-per-connection")
    assert services.mariadb_thread_handling() == "one-thread-per-connection"
    monkeypatch.delenv("MARIADB_THREAD_HANDLING")
    assert services.mariadb_thread_handling() == "pool-of-threads"


def test_freeze_makes_a_backend_hang_and_thaw_brings_it_back(services_up):
    services.freeze("redis")
    try:
        with pytest.raises(redislib.exceptions.TimeoutError):
            backends.Redis(timeout=0.3).ping()
    finally:
        services.thaw("redis")
    backends.Redis().ping()


def test_freeze_returns_only_when_every_thread_has_stopped(services_up):
    # MariaDB runs a dozen threads; right after kill(SIGSTOP) some are often still running.
    pid = services.pid("mysql")
    tasks = pathlib.Path(f"/proc/{pid}/task")
    for _ in range(20):
        services.freeze("mysql")
        try:
            states = [(t / "stat").read_text().rsplit(")", 1)[1].split()[0] for t in tasks.iterdir()]
            assert set(states) <= {"T", "t"}, states
        finally:
            services.thaw("mysql")
    backends.Mysql().ping()


def test_stop_and_start_again_reseeds(services_up):
    services.stop("memcache", quiet=True)
    assert services.pid("memcache") is None
    # stop() returns only once the port is released, or start() would take it for a stranger's
    assert not ports.listening(*local._port("memcache"))
    assert services.start("memcache", quiet=True) == "started"
    assert backends.Memcache().client.get("greeting:5").decode() == contract.greetings()[5]


def test_external_services_are_never_started(services_up, monkeypatch):
    monkeypatch.setenv("EXTERNAL_SERVICES", "redis")
    assert services.start("redis", quiet=True) == "external"
    services.stop("redis", quiet=True)  # must leave it alone
    assert services.status("redis") == "external, answering"
    monkeypatch.setenv("EXTERNAL_SERVICES", "mysql")
    monkeypatch.setenv("MYSQL_PORT", "1")  # nothing listens there
    with pytest.raises(services.ServiceError, match="does not answer"):
        services.start("mysql", quiet=True)
    monkeypatch.setenv("EXTERNAL_SERVICES", "postgres")
    with pytest.raises(SystemExit, match="unknown service"):
        services.start("mysql", quiet=True)
