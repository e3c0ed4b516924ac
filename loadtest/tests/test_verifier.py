"""Every verifier check passes against a correct stack and fails against the fault it guards against."""
import functools
import json
import pathlib
import sys

import pytest
from brokenproxy import BrokenProxy

from harness import stacks, verify
from harness.contract import protocol
from harness.contract.checking import Target
from harness.ports import free_port

pytestmark = pytest.mark.e2e  # real servers, services or load: `pytest -m "not e2e"` leaves them out

only = functools.partial  # readability: a check narrowed to one backend


def run(target, proxy_fault, check):
    with BrokenProxy((target.host, target.port), proxy_fault) as proxy:
        proxied = Target(target.name, "127.0.0.1", proxy.port, target.services)
        return check(proxied)


CHECKS = {
    "cases": verify.check_cases,
    "no_caching": verify.check_no_caching,
    "date": verify.check_date,
    "keep_alive": verify.check_keep_alive,
    "pipelining": verify.check_pipelining,
    "http10": verify.check_http10,
    "connection_close": verify.check_connection_close,
    "sleep_waits": verify.check_sleep_waits,
    "concurrency": verify.check_concurrency,
    "outage_redis": only(verify.check_outages, names=("redis",)),
    # MariaDB's own error (the table renamed away): no error proxy needed, so it runs behind this one.
    # The Redis and memcached cases are proved on errorstack.py (test_error_proxy.py).
    "backend_error_mysql": only(verify.check_backend_errors,
                                cases=[c for c in verify.BACKEND_ERROR_CASES if c.backend == "mysql"]),
}

# fault -> the check that must catch it (and, where it matters, which of its results)
CAUGHT_BY = [
    ("escaped_slash", "cases", "golden responses"),
    ("extra_header", "cases", "golden responses"),
    ("no_date", "cases", "golden responses"),
    ("no_date", "date", None),
    ("frozen_date", "date", None),
    ("wrong_server", "cases", "golden responses"),
    ("chunked", "cases", "golden responses"),
    ("head_body", "cases", "golden responses"),
    ("double_read", "cases", "backend reads (one per data request, none for errors)"),
    ("read_on_400", "cases", "backend reads (one per data request, none for errors)"),
    ("cache", "no_caching", None),
    ("no_sleep", "sleep_waits", None),
    ("close_always", "keep_alive", None),
    ("no_pipelining", "pipelining", None),
    ("dies_after_pipelining", "pipelining", None),
    ("http10_keep_open", "http10", None),
    ("ignore_close", "connection_close", None),
    ("crossed", "concurrency", None),
    ("slow_503", "outage_redis", None),
    ("503_as_500", "outage_redis", None),
    ("500_as_503", "backend_error_mysql", None),
]


@pytest.mark.parametrize("check", list(CHECKS))
def test_every_check_passes_through_a_faithful_proxy(target, check):
    results = run(target, "none", CHECKS[check])
    assert results and all(c.ok for c in results), [(c.name, c.detail) for c in results if not c.ok]


@pytest.mark.parametrize("fault, check, result", CAUGHT_BY, ids=[f"{f}-{c}" for f, c, _ in CAUGHT_BY])
def test_each_fault_is_caught(target, fault, check, result):
    results = run(target, fault, CHECKS[check])
    failed = [c for c in results if not c.ok]
    assert failed, f"{check} did not notice: {fault}"
    if result:
        assert result in [c.name for c in failed], [(c.name, c.detail) for c in failed]


def test_a_failed_case_shows_which_bytes(target):
    (golden, _) = run(target, "escaped_slash", verify.check_cases)
    assert "bodies differ at byte" in golden.detail
    assert "a\\\\/b" in golden.detail or "\\\\/" in golden.detail, golden.detail


def test_a_server_that_stops_answering_fails_every_check_without_waiting_out_each_request(target):
    with BrokenProxy((target.host, target.port), "stall") as proxy:
        proxied = Target(target.name, "127.0.0.1", proxy.port, target.services)
        results = verify.run_checks(proxied, report=lambda line: None)
    assert results and not any(c.ok for c in results), [(c.name, c.ok) for c in results]
    golden, reads, *rest = results
    assert verify.STOPPED_ANSWERING in golden.detail, golden.detail
    assert "not checked" in reads.detail, reads.detail  # no answer is no proof of the read count
    assert [c.name for c in rest] == [f.__name__.removeprefix("check_") for f in verify.CHECKS[1:]]
    assert all(c.detail.startswith("not run:") for c in rest)
    assert all(c.stopped_answering for c in results)  # what makes verify_stack run the stall_dump
    # warm-up: the 16 in flight when the first went unanswered; then one golden case and a probe each
    assert proxy.count <= 16 + 4, proxy.count


HANGS_AFTER_ONE_ANSWER = '''
import socket, sys, time
server = socket.create_server(("127.0.0.1", int(sys.argv[1])), backlog=1024)
conn, _ = server.accept()
conn.recv(65536)
conn.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\nConnection: close\\r\\n\\r\\nhi")
conn.close()
time.sleep(3600)  # hung: the kernel still accepts connections, nobody reads them
'''


def test_a_hung_stack_fails_verification_and_shows_its_stall_dump(services_up, tmp_path, capsys):
    d = tmp_path / "hangs"
    d.mkdir()
    (d / "server.py").write_text(HANGS_AFTER_ONE_ANSWER)
    port = free_port("127.0.0.1")
    (d / "stack.toml").write_text(
        f'name = "hangs"\nlanguage = "Python"\nframework = "none"\nport = {port}\nbuild = "true"\n'
        f'run = "exec {sys.executable} server.py {port}"\n'
        f'stall_dump = "echo stalled server pid $PID; grep ^State: /proc/$PID/status"\n')
    ok, results = verify.verify_stack(stacks.parse(d / "stack.toml"))
    out = capsys.readouterr().out
    assert not ok and results and not any(c.ok for c in results)
    assert "what the server is doing (stall_dump):" in out, out
    dump = out.split("(stall_dump):")[1]
    assert "stalled server pid " in dump and "State:\tS (sleeping)" in dump, dump
    assert "last lines of" in out


# ---------------------------------------------------------------- declared deviations, end to end

LAX = pathlib.Path(__file__).with_name("laxserver.py")
FRACTIONAL = '''
[[deviation]]
check = "framing (RFC 9112: 400 and close)"
case = "Content-Length: 1.5"
observed = "408"
why = "the server reads 1.5 as 1 and waits for that byte of body"
upstream = "https://github.com/swoole/swoole-src/pull/2062"
'''


@pytest.mark.parametrize("fault, declared, accepted, line", [
    ("fractional_length", FRACTIONAL, True,
     "VERIFIED WITH KNOWN DEVIATIONS; 1 passed, 1 with known deviations (1 case), 0 failed, 0 skipped"),
    ("none", FRACTIONAL, False, "FAILED; 1 passed, 1 failed, 0 skipped"),                       # no longer happens
    ("fractional_length", FRACTIONAL.replace('"408"', '"close"'), False, "FAILED; 1 passed, 1 failed, 0 skipped"),
    ("fractional_length", "", False, "FAILED; 1 passed, 1 failed, 0 skipped"),                  # undeclared
], ids=["as-declared", "no-longer-happens", "otherwise", "undeclared"])
def test_verify_accepts_a_stack_only_for_its_deviations_as_declared(services_up, tmp_path, capsys, fault, declared,
                                                                     accepted, line):
    """The laxserver as a stack (its manifest declaring Content-Length: 1.5 or not), verified on the
    framing and sizes checks: what `make verify` prints, its exit status and .run/verify/<stack>.json."""
    d = tmp_path / "laxserver"
    d.mkdir()
    port = free_port("127.0.0.1")
    (d / "stack.toml").write_text(
        f'name = "laxserver"\nlanguage = "Python"\nframework = "none"\nport = {port}\nbuild = "true"\n'
        f'run = "exec {sys.executable} {LAX} $PORT {fault} $HEAD_TIMEOUT_MS $IDLE_TIMEOUT_MS"\n' + declared)
    verdicts = verify.verify_all([stacks.parse(d / "stack.toml")], build_first=False,
                                 checks=[protocol.check_framing, protocol.check_sizes])
    out = capsys.readouterr().out
    assert bool(verdicts) is accepted, out  # cmd_verify: exit 0 exactly when accepted
    assert f"=> laxserver: {line}" in out, out
    saved = json.loads(verify.result_path("laxserver").read_text())
    assert saved["ok"] is accepted
    if accepted:
        assert "  DEVN  framing (RFC 9112: 400 and close): 11 of 12 as the contract says" in out, out
        assert "    why: the server reads 1.5 as 1" in out and "upstream: https://github.com/swoole/swoole-src/pull/2062" in out
        assert "laxserver      verified with 1 known deviation: Content-Length: 1.5 -> 408" in out, out
        assert verdicts.deviations["laxserver"] == saved["deviations"] == [{
            "check": "framing (RFC 9112: 400 and close)", "case": "Content-Length: 1.5", "observed": "408",
            "why": "the server reads 1.5 as 1 and waits for that byte of body",
            "upstream": "https://github.com/swoole/swoole-src/pull/2062"}]
        assert [c["known_deviation"] for c in saved["checks"]] == [True, False]
    else:
        assert "  FAIL  framing" in out and "DEVN" not in out and saved["deviations"] == [], out
        assert not verdicts.deviations
