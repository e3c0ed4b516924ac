"""Every protocol check passes against a server that keeps the rules, and fails against one that
breaks exactly the rule it guards (laxserver.py). The real stacks are held to the same checks by
`make verify`."""
import contextlib
import pathlib
import socket
import subprocess
import sys
import threading
import time
from dataclasses import replace

import pytest

from harness.config import raise_nofile
from harness.contract import deviations, protocol
from harness.contract.checking import Target
from harness.ports import free_port

pytestmark = pytest.mark.e2e  # real servers, services or load: `pytest -m "not e2e"` leaves them out

LAX = pathlib.Path(__file__).with_name("laxserver.py")
# Short time limits keep each check to seconds; the many-connections check gets a longer idle
# limit and fewer connections, since a Python server opens them slowly.
LIMITS = replace(protocol.LIMITS, head_timeout_ms=1000, idle_timeout_ms=4000)
MANY = replace(protocol.LIMITS, head_timeout_ms=1000, idle_timeout_ms=20000, idle_connections=3000)

CHECKS = {
    "sizes": (protocol.check_sizes, LIMITS),
    "framing": (protocol.check_framing, LIMITS),
    "validity": (protocol.check_validity, LIMITS),
    "bodies": (protocol.check_bodies, LIMITS),
    "head_timeout": (protocol.check_head_timeout, LIMITS),
    "idle_timeout": (protocol.check_idle_timeout, LIMITS),
    "pipeline_flood": (protocol.check_pipeline_flood, LIMITS),
    "disconnects": (protocol.check_disconnects, LIMITS),
    "many_connections": (protocol.check_many_connections, MANY),
}

# fault -> the check that must catch it
CAUGHT_BY = [
    ("small_heads", "sizes"),
    ("no_line_limit", "sizes"),
    ("head_500", "sizes"),
    ("head_silent_close", "sizes"),
    ("open_after_refusal", "sizes"),
    ("open_after_refusal", "framing"),
    ("first_length", "framing"),
    ("space_before_colon", "framing"),
    ("bad_name_chars", "framing"),
    ("length_over_chunked", "framing"),
    ("body_ignored", "bodies"),
    ("fractional_length", "framing"),
    ("no_head_timeout", "head_timeout"),
    ("blocking", "head_timeout"),
    ("no_idle_timeout", "idle_timeout"),
    ("idle_too_soon", "idle_timeout"),
    ("unbounded_pipeline", "pipeline_flood"),
    ("leak_on_disconnect", "disconnects"),
    ("connection_cap", "many_connections"),
    ("host_lax", "validity"),
    ("target_lax", "validity"),
    ("method_lax", "validity"),
    ("version_lax", "validity"),
    ("fold_as_field", "validity"),
    ("field_lax", "validity"),
]

# fault -> the request-validity cases it must fail, by label (each case proved to catch its fault)
VALIDITY_CAUGHT = {
    "host_lax": ["HTTP/1.1 without Host", "two Host lines, the same value", "two Host lines, different values",
                 "Host with userinfo (user@verify)", "Host with a path (verify/x)",
                 "Host holding a list (verify, other)", "an empty Host"],
    "target_lax": ["asterisk-form with GET (GET *)", "authority-form with GET (GET verify:80)",
                   "a raw byte above 0x7F in the target", "overlong UTF-8 in the target", "a NUL in the target",
                   "a control byte in the target"],
    "method_lax": ["CONNECT verify:443", "a 33-byte method token", "a 100 kB method token"],
    "version_lax": ["lower-case version (http/1.1)", "version without a minor (HTTP/1)",
                    "version with leading zeros (HTTP/01.01)", "another major version (HTTP/2.0)"],
    "fold_as_field": ["an obs-fold continuation line"],
    "field_lax": ["a field line without a colon", "a NUL in a field value"],
}


@contextlib.contextmanager
def lax_server(fault: str, limits: protocol.Limits):
    raise_nofile(limits.idle_connections * 2 + 1024)  # the server inherits it
    port = free_port("127.0.0.1")
    proc = subprocess.Popen([sys.executable, str(LAX), str(port), fault, str(limits.head_timeout_ms),
                             str(limits.idle_timeout_ms)])
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"laxserver ({fault}) did not start") from None
                time.sleep(0.05)
        yield Target("laxserver", "127.0.0.1", port, services=set(), head_timeout_s=limits.head_timeout_ms / 1000,
                     idle_timeout_s=limits.idle_timeout_ms / 1000, pids=lambda: [proc.pid])
    finally:
        proc.kill()
        proc.wait()


def run(fault: str, check: str, declared: list[deviations.Deviation] = ()):
    fn, limits = CHECKS[check]
    with lax_server(fault, limits) as target:
        target.deviations = deviations.by_case(list(declared))
        return fn(target, limits)


@pytest.mark.parametrize("check", list(CHECKS))
def test_every_protocol_check_passes_against_a_server_that_keeps_the_rules(check):
    results = run("none", check)
    assert results and all(c.ok and not c.skipped for c in results), [(c.name, c.detail) for c in results]


@pytest.mark.parametrize("fault, check", CAUGHT_BY, ids=[f"{f}-{c}" for f, c in CAUGHT_BY])
def test_each_protocol_fault_is_caught(fault, check):
    results = run(fault, check)
    failed = [c for c in results if not c.ok]
    assert failed, f"{check} did not notice: {fault} ({[c.detail for c in results]})"


@pytest.mark.parametrize("fault", list(VALIDITY_CAUGHT))
def test_each_request_validity_case_catches_its_fault(fault):
    (check,) = run(fault, "validity")
    failed = {line.split(": ", 1)[0].strip() for line in check.detail.splitlines()
              if line.startswith("  ") and not line.startswith("   ")}
    assert failed == set(VALIDITY_CAUGHT[fault]), check.detail


def test_a_refusal_names_what_was_sent_and_what_came_back():
    (check,) = run("head_500", "sizes")
    assert "expected 431" in check.detail and "status 500" in check.detail, check.detail


def test_a_refusal_whose_body_ends_with_the_close_counts_as_closed():
    """Swoole answers a bad request with a bare `HTTP/1.1 400 Bad Request` (no Content-Length) and
    closes: the close that ends the body is also the close the contract asks for."""
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        with listener:
            conn, _ = listener.accept()
            with conn:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n")

    threading.Thread(target=serve, daemon=True).start()
    target = Target("bare", "127.0.0.1", listener.getsockname()[1], services=set())
    outcome = protocol.exchange(target, protocol.request_head("/hello", [("Content-Length", "abc")]))
    assert protocol.refused(400, outcome) == [], outcome


# ---------------------------------------------------------------- declared deviations (manifest [[deviation]])

def deviation(case: str, observed: str, check: str = protocol.FRAMING) -> deviations.Deviation:
    return deviations.Deviation(check, case, observed, why="the reactor frames the body before the parser sees it",
                                upstream="https://github.com/swoole/swoole-src/pull/2062")


FRACTIONAL = deviation("Content-Length: 1.5", "408")


def test_a_declared_deviation_that_happens_as_declared_is_a_known_deviation_not_a_pass():
    (check,) = run("fractional_length", "framing", [FRACTIONAL])
    assert check.label == "DEVN" and not check.ok and check.known_deviation and check.accepted, check.detail
    assert check.deviations == [FRACTIONAL.asdict()]
    assert "11 of 12 as the contract says; 1 known deviation(s)" in check.detail, check.detail
    for shown in ("Content-Length: 1.5: 408", "status 408, expected 400", FRACTIONAL.why, FRACTIONAL.upstream):
        assert shown in check.detail, (shown, check.detail)


def test_the_same_fault_undeclared_fails():
    (check,) = run("fractional_length", "framing")
    assert check.label == "FAIL" and not check.accepted and not check.deviations
    assert "Content-Length: 1.5: status 408, expected 400" in check.detail, check.detail


def test_a_declared_deviation_that_no_longer_happens_fails():
    (check,) = run("none", "framing", [FRACTIONAL])
    assert check.label == "FAIL" and not check.accepted, check.detail
    assert ("Content-Length: 1.5: declared deviation no longer happens (declared '408', the case passes): "
            "remove it from the manifest") in check.detail, check.detail


def test_a_declared_deviation_that_happens_otherwise_fails():
    (check,) = run("fractional_length", "framing", [deviation("Content-Length: 1.5", "close")])
    assert check.label == "FAIL" and not check.accepted, check.detail
    assert "Content-Length: 1.5: declared deviation 'close', but observed '408': status 408" in check.detail


def test_a_declaration_does_not_hide_the_other_failing_cases():
    """space_before_colon serves both whitespace cases; declaring one leaves the other a failure."""
    declared = deviation("whitespace before a colon (X-Probe : 1)", "200 open")
    (check,) = run("space_before_colon", "framing", [declared])
    assert check.label == "FAIL" and not check.accepted, check.detail
    assert "whitespace before a colon (Content-Length : 0): status 200, expected 400" in check.detail
    assert check.deviations == [declared.asdict()] and "and 1 known deviation(s), as declared" in check.detail


def test_every_case_of_a_check_may_be_declared_only_by_its_exact_observed():
    (check,) = run("space_before_colon", "framing", [deviation("whitespace before a colon (X-Probe : 1)", "200 open"),
                                                     deviation("whitespace before a colon (Content-Length : 0)",
                                                               "200 open")])
    assert check.label == "DEVN", check.detail
    (check,) = run("space_before_colon", "framing", [deviation("whitespace before a colon (X-Probe : 1)", "200"),
                                                     deviation("whitespace before a colon (Content-Length : 0)",
                                                               "200 open")])
    assert check.label == "FAIL" and "declared deviation '200', but observed '200 open'" in check.detail


@pytest.mark.parametrize("responses, closed, problem, expected", [
    ([400], True, "", "400"),
    ([408], False, "", "408 open"),
    ([], True, "", "close"),
    ([], False, "no response within 5.0s", "no answer"),
    ([200, 404], True, "", "200, 404 (closed)"),
    ([], False, "malformed response: boom", "malformed response: boom"),
])
def test_the_observed_vocabulary(responses, closed, problem, expected):
    from harness.contract.http_client import Response
    outcome = protocol.Outcome([Response(status, [], b"", "1.1") for status in responses], closed, problem)
    assert protocol.observed(outcome) == expected
    assert bool(deviations.OBSERVED.match(expected)) == (len(responses) < 2 and not problem.startswith("malformed"))
