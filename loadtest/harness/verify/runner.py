"""The verifier: proves a running stack answers the contract byte for byte.

Each check is a function of one concern, returning a Check. Beyond comparing every golden case,
it watches the backends' own counters, tampers with stored values to catch caches, and stops or
freezes each backend to see 503s within the deadline and recovery without a restart.
"""
import concurrent.futures
import datetime
import email.utils
import json
import secrets
import sys
import textwrap
import threading
import time
from dataclasses import asdict, dataclass

from harness import contract, services, stacks
from harness.accounting import procstats, stats
from harness.config import RUN_DIR, SERVICES, backend_timeout_s, external_services, raise_nofile, settings
from harness.contract import deviations, protocol
from harness.contract.checking import (
    IMF_FIXDATE, Check, Target, byte_diff, case_problems, differences, show_bytes, summarize
)
from harness.contract.http_client import HttpError, ResponseTimeout
from harness.services import backends
from harness.verify import error_proxy

# How long past BACKEND_TIMEOUT_MS a 503 may take: scheduling on a busy 2-core box, not a budget for the stack.
DEADLINE_SLACK = 0.75
RECOVERY_WITHIN = 2.0
TAMPER_ID = 777
# /sleep, timed by the client from sending to the last byte (see check_sleep_waits).
SLEEP_SAMPLES = 20
SLEEP_MIN_MS = 9.0
SLEEP_MEDIAN_MS = 10.0
MAY_CLOSE = {400, 500, 503}  # statuses after which a server may end a kept-alive connection (CONTRACT.md)


# ---------------------------------------------------------------- backend counters

class Counters:
    def __init__(self):
        self.clients = {name: backends.client(name) for name in SERVICES}

    def snapshot(self) -> dict[str, int]:
        return {name: c.reads() for name, c in self.clients.items()}

    def close(self):
        for c in self.clients.values():
            c.close()


def warm_up(target: Target) -> None:
    """Fill pools and JITs first, so that lazily opened connections don't count as requests.

    The first request left unanswered ends it: a hung server would otherwise cost 5 s for each of
    the 832 requests, and the checks that follow say what is wrong."""
    targets = [("GET", "/hello")] + [("GET", f"/{ep}?id={i}") for ep in SERVICES for i in (1, 2, 3)]
    gave_up = threading.Event()

    def one(method: str, path: str) -> None:
        if gave_up.is_set():
            return
        try:
            target.fetch(method, path)
        except (TimeoutError, ResponseTimeout):  # connect timed out, or no response
            gave_up.set()
        except (OSError, HttpError):
            pass

    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        for _ in range(4):
            list(pool.map(lambda t: one(*t), targets * 4))


# ---------------------------------------------------------------- the checks

STOPPED_ANSWERING = "the server stopped answering"


def unanswered(target: Target) -> str | None:
    """None while GET /hello on a new connection is answered; else why not (a hung server then fails
    the rest at once instead of costing 5 s per request)."""
    try:
        target.fetch("GET", "/hello")
        return None
    except (OSError, HttpError) as e:
        return f"{STOPPED_ANSWERING} (GET /hello on a new connection: {str(e) or type(e).__name__})"


def check_cases(target: Target, cases: list[contract.Case] | None = None) -> list[Check]:
    """Every golden case (or those given) on one kept-alive connection, each with the backend reads it caused."""
    counters = Counters()
    failures, read_failures, closed_by_server, stopped = [], [], 0, False
    cases = contract.cases() if cases is None else cases
    conn = target.connect()
    try:
        for i, case in enumerate(cases):
            want = {n: case.reads.get(n, 0) for n in SERVICES}
            # Up to two tries for the read count: a pool's housekeeping may have run a query meanwhile.
            for attempt in (1, 2):
                before = counters.snapshot()
                try:
                    resp = conn.request(case.method, case.target)
                except (OSError, HttpError) as e:
                    failures.append(f"  {case.name}: {case.method} {case.target}: {e}")
                    read_failures.append(f"  {case.name}: {case.method} {case.target}: not checked, no response")
                    resp = None
                    conn.close()
                    conn = target.connect()
                    break
                after = counters.snapshot()
                reads = {n: after[n] - before[n] for n in SERVICES}
                if reads == want:
                    break
            if resp is None:
                if why := unanswered(target):
                    stopped = True
                    rest = len(cases) - i - 1
                    failures.append(f"  {why}: the remaining {rest} cases were not run")
                    read_failures.append(f"  {why}: the remaining {rest} cases were not checked")
                    break
                continue
            problems = case_problems(target, case, resp)
            if problems:
                failures.append(f"  {case.name}: {case.method} {case.target}\n    " + "\n    ".join(problems))
            if reads != want:
                read_failures.append(f"  {case.name}: {case.method} {case.target}: backend reads {reads}, "
                                     f"expected {want}")
            if not conn.reusable:
                if resp.status not in MAY_CLOSE:
                    failures.append(f"  {case.name}: {case.method} {case.target}: the server ended the connection "
                                    f"after a {resp.status} (allowed only after {sorted(MAY_CLOSE)})")
                conn.close()
                conn, closed_by_server = target.connect(), closed_by_server + 1
    finally:
        conn.close()
        counters.close()
    checks = [summarize(failures, len(cases), "golden responses"),
              summarize(read_failures, len(cases), "backend reads (one per data request, none for errors)")]
    if closed_by_server:
        checks[0].detail += f" ({closed_by_server} reconnects: the server closed a kept-alive connection)"
    for c in checks:
        c.stopped_answering = stopped
    return checks


def check_no_caching(target: Target) -> list[Check]:
    """Change a stored value behind the stack's back; the next response must carry it."""
    original = contract.greetings()[TAMPER_ID]
    checks = []
    for name in SERVICES:
        path = f"/{name}?id={TAMPER_ID}"
        client = backends.client(name)
        problems = []
        try:
            target.fetch("GET", path)  # a cache, if any, now holds the original
            fresh = f'fresh "{secrets.token_hex(6)}" / <é> \\ 🎈'
            client.set_message(TAMPER_ID, fresh)
            resp = target.fetch("GET", path)
            if resp.body != contract.json_body(TAMPER_ID, fresh):
                problems.append(f"after changing the stored value: {byte_diff(contract.json_body(TAMPER_ID, fresh), resp.body)}")
        except (OSError, HttpError) as e:
            problems.append(str(e))
        finally:
            client.set_message(TAMPER_ID, original)
            client.close()
        try:
            resp = target.fetch("GET", path)
            if resp.body != contract.json_body(TAMPER_ID, original):
                problems.append("after restoring the stored value: "
                                + byte_diff(contract.json_body(TAMPER_ID, original), resp.body))
        except (OSError, HttpError) as e:
            problems.append(str(e))
        checks.append(Check(f"no caching: {name}", not problems, "; ".join(problems) or "fresh value served"))
    return checks


def _parse_date(value: str | None) -> datetime.datetime | None:
    if not value or not IMF_FIXDATE.match(value):
        return None
    return email.utils.parsedate_to_datetime(value)


def check_date(target: Target) -> list[Check]:
    """Date is current to the second and moves on: a cached Date must be refreshed every second."""
    problems = []
    with target.connect() as conn:
        seen = []
        for _ in range(3):
            resp = conn.request("GET", "/hello")
            now = datetime.datetime.now(datetime.timezone.utc)
            date = _parse_date(resp.header("date"))
            if date is None:
                problems.append(f"Date {resp.header('date')!r} is missing or not IMF-fixdate")
                break
            skew = abs((now - date).total_seconds())
            if skew > 2:
                problems.append(f"Date {resp.header('date')} is {skew:.1f}s away from the clock")
            seen.append(date)
            time.sleep(1.1)
        if len(seen) == 3 and len(set(seen)) < 3:
            problems.append(f"Date did not change across 1.1 s pauses: {[d.strftime('%H:%M:%S') for d in seen]}")
    return [Check("Date current and refreshed every second", not problems, "; ".join(problems) or "ok")]


def check_keep_alive(target: Target) -> list[Check]:
    """200, 404 and 405 answers keep the connection (400/500/503 may close it: see CONTRACT.md)."""
    problems = []
    requests = [("GET", "/hello"), ("GET", "/redis?id=1"), ("GET", "/mysql?id=2"), ("GET", "/memcache?id=3"),
                ("GET", "/nope"), ("POST", "/hello"), ("HEAD", "/sleep")] * 5
    with target.connect() as conn:
        for method, path in requests:
            try:
                conn.request(method, path)
            except (OSError, HttpError) as e:
                problems.append(f"{method} {path} on the kept-alive connection: {e}")
                break
            if not conn.reusable:
                problems.append(f"the server closed the connection after {method} {path}")
                break
        else:
            if conn.peer_closed(0.2):
                problems.append("the server closed an idle connection within 0.2 s")
    return [Check("keep-alive reuse", not problems, "; ".join(problems) or f"{len(requests)} requests on one connection")]


def check_pipelining(target: Target) -> list[Check]:
    """Requests written at once are answered in order, fast ones not overtaking slow ones, and the
    connection is still served afterwards."""
    connections = [  # per connection, the batches written one after another, each all at once
        [["sleep", "hello", "redis id=3", "unknown path", "mysql id=5", "memcache id=20", "hello HEAD",
          "POST hello", "memcache missing row", "hello",
          "redis 400 abc"]],  # last: a server may close after a 400 (CONTRACT.md)
        # Two fast requests behind a slow one: both are waiting for their turn when the slow one is
        # answered, so each answer hands over to a request already waiting. Then one more request:
        # a server (or a worker) that fell over after the last answer has lost the connection.
        [["sleep", "hello", "hello"], ["hello"]],
    ]
    failures, total = [], sum(len(names) for batches in connections for names in batches)
    for batches in connections:
        names: list[str] = []
        try:
            with target.connect() as conn:
                for names in batches:
                    cases = [contract.case(n) for n in names]
                    responses = conn.exchange([(c.method, c.target) for c in cases])
                    for i, (case, resp) in enumerate(zip(cases, responses)):
                        problems = case_problems(target, case, resp)
                        if problems:
                            failures.append(f"  response {i + 1} of {len(cases)} ({case.name}): " + "; ".join(problems))
        except (OSError, HttpError) as e:
            shown = ", ".join(names[:4]) + (", …" if len(names) > 4 else "")
            failures.append(f"  requests written at once ({shown}): {str(e) or type(e).__name__}")
        if failures:
            break
    return [summarize(failures, total, "pipelining (answered in order)")]


def check_http10(target: Target) -> list[Check]:
    case = contract.case("hello")
    problems = []
    try:
        with target.connect() as conn:
            resp = conn.request("GET", "/hello", version="1.0")
            problems += case_problems(target, case, resp)
            if not conn.peer_closed(2.0):
                problems.append("connection still open 2 s after an HTTP/1.0 response without keep-alive")
    except (OSError, HttpError) as e:
        problems.append(str(e))
    return [Check("HTTP/1.0 answered and closed", not problems, "; ".join(problems) or "ok")]


def check_connection_close(target: Target) -> list[Check]:
    case = contract.case("redis id=3")
    problems = []
    try:
        with target.connect() as conn:
            resp = conn.request(case.method, case.target, headers={"Connection": "close"})
            problems += case_problems(target, case, resp)
            if not conn.peer_closed(2.0):
                problems.append("connection still open 2 s after answering `Connection: close`")
    except (OSError, HttpError) as e:
        problems.append(str(e))
    return [Check("Connection: close honoured", not problems, "; ".join(problems) or "ok")]


def check_sleep_waits(target: Target) -> list[Check]:
    """/sleep really waits its 10 ms: a stack that skipped or shortened the wait would win the /sleep
    benchmark without doing the work. Lower bounds only, so a busy machine can make it slower but
    never fail it; a millisecond timer may fire up to 1 ms early (CONTRACT.md)."""
    took, problems = [], []
    with target.connect() as conn:
        for _ in range(SLEEP_SAMPLES):
            start = time.perf_counter()
            resp = conn.request("GET", "/sleep")
            took.append((time.perf_counter() - start) * 1000)
            if resp.status != 200:
                problems.append(f"GET /sleep answered {resp.status}")
                break
    took.sort()
    median = stats.median(took)
    if took[0] < SLEEP_MIN_MS:
        problems.append(f"the shortest of {len(took)} took {took[0]:.2f} ms (less than {SLEEP_MIN_MS} ms)")
    if median < SLEEP_MEDIAN_MS:
        problems.append(f"the median of {len(took)} took {median:.2f} ms (less than {SLEEP_MEDIAN_MS} ms)")
    detail = "; ".join(problems) or f"{len(took)} in turn took {took[0]:.2f} to {took[-1]:.2f} ms, median {median:.2f}"
    return [Check("/sleep waits 10 ms", not problems, detail)]


def check_concurrency(target: Target) -> list[Check]:
    """Many connections at once, each response must be its own request's (no crossed buffers)."""
    ids = contract.greetings()
    work = [(ep, i) for i in range(100, 164) for ep in SERVICES]

    def one(item):
        ep, i = item
        try:
            with target.connect() as conn:
                for j in (i, i + 1000, i + 2000):
                    resp = conn.request("GET", f"/{ep}?id={j}")
                    if resp.status != 200 or resp.body != contract.json_body(j, ids[j]):
                        return f"  /{ep}?id={j}: status {resp.status}, body {show_bytes(resp.body, 80)}"
        except (OSError, HttpError) as e:
            return f"  /{ep}?id={i}: {e}"
        return None

    with concurrent.futures.ThreadPoolExecutor(64) as pool:
        failures = [f for f in pool.map(one, work) if f]
    return [summarize(failures, len(work) * 3, "concurrent requests (64 connections)")]


def _expect_error(target: Target, name: str, first_id: int, status: int = 503) -> list[str]:
    """A data request while `name` is out (or answering errors) must get `status` within the
    deadline; /hello must keep answering."""
    deadline = backend_timeout_s() + DEADLINE_SLACK
    want = contract.error(status)
    # Ids no earlier phase asked for: a late answer to an earlier request that leaks onto a new
    # connection then shows up as a wrong id instead of passing for a right one.
    paths = [f"/{name}?id={i}" for i in range(first_id, first_id + 8)]

    def one(path):
        started = time.monotonic()
        try:
            resp = target.fetch("GET", path, timeout=deadline + 5)
        except (OSError, HttpError) as e:
            return f"{path}: {e}"
        took = time.monotonic() - started
        problems = differences(want, resp)
        if took > deadline:
            problems.append(f"answered after {took:.2f}s, deadline {deadline:.2f}s (BACKEND_TIMEOUT_MS + slack)")
        return f"{path}: " + "; ".join(problems) if problems else None

    with concurrent.futures.ThreadPoolExecutor(len(paths) + 1) as pool:
        hello = pool.submit(lambda: target.fetch("GET", "/hello", timeout=deadline + 5))
        wrong = [p for p in pool.map(one, paths) if p]
        out = []
        if wrong:  # one request's story is enough; the others usually differ only in the id
            more = f" (and {len(wrong) - 1} more of {len(paths)} requests)" if len(wrong) > 1 else ""
            out.append(wrong[0] + more)
        try:
            resp = hello.result()
            if resp.status != 200:
                out.append(f"/hello answered {resp.status} while {name} was out")
        except (OSError, HttpError) as e:
            out.append(f"/hello failed while {name} was out: {e}")
    return out


def _expect_recovery(target: Target, name: str) -> list[str]:
    """Within RECOVERY_WITHIN of the backend's return, requests are answered again: eleven distinct
    ids in a row, each asked again while it is not yet a 200 and the time is not up (a pre-forked
    stack's workers each notice the return on their own), and never with wrong bytes: a client that
    kept a timed-out request's late reply would answer off by one."""
    ids = contract.greetings()
    back = time.monotonic()
    for i in range(300, 311):
        while True:
            try:
                resp = target.fetch("GET", f"/{name}?id={i}", timeout=RECOVERY_WITHIN)
                last = f"status {resp.status}"
                if resp.status == 200:
                    if resp.body != contract.json_body(i, ids[i]):
                        return [f"after recovery, wrong answer: id {i}: {show_bytes(resp.body, 60)}"]
                    break
            except (OSError, HttpError) as e:
                last = str(e)
            if time.monotonic() - back >= RECOVERY_WITHIN:
                return [f"id {i}: no 200 within {RECOVERY_WITHIN:.0f}s after {name} came back (last: {last})"]
            time.sleep(0.05)
    return []


def check_outages(target: Target, names=SERVICES, modes=("stopped", "frozen")) -> list[Check]:
    """Each backend stopped (refusing) and frozen (accepting, never answering), one at a time."""
    checks = []
    for name in names:
        for mode in modes:
            label = f"outage: {name} {mode}"
            if name not in target.services:
                checks.append(Check(label, False, f"{name} is external (EXTERNAL_SERVICES): cannot take it down here",
                                    skipped=True))
                continue
            problems = []
            try:
                if mode == "stopped":
                    services.stop(name, quiet=True)
                else:
                    services.freeze(name)
                first_id = 200 + 10 * (2 * SERVICES.index(name) + (mode == "frozen"))
                problems += [f"while {mode}: {p}" for p in _expect_error(target, name, first_id)]
            finally:
                if mode == "stopped":
                    services.start(name, quiet=True)
                else:
                    services.thaw(name)
            problems += _expect_recovery(target, name)
            checks.append(Check(label, not problems, "; ".join(problems) or
                                f"503 within the deadline, /hello served, recovered within {RECOVERY_WITHIN:.0f}s"))
    return checks


def check_start_with_backend_down(stack: stacks.Stack, env: dict[str, str], names=SERVICES) -> list[Check]:
    """The stack started while each backend in turn is stopped: it starts, serves /hello, answers
    503 on that backend's endpoint, and 200 again within RECOVERY_WITHIN of the backend's return."""
    checks = []
    for name in names:
        label = f"start with {name} down"
        if name in external_services():
            checks.append(Check(label, False, f"{name} is external (EXTERNAL_SERVICES): cannot take it down here",
                                skipped=True))
            continue
        problems = []
        services.stop(name, quiet=True)
        try:
            with stacks.start(stack, env=env):
                target = Target(stack.name, stack.host, stack.port)
                first_id = 300 + 10 * SERVICES.index(name)
                problems += [f"while down: {p}" for p in _expect_error(target, name, first_id)]
                services.start(name, quiet=True)
                problems += _expect_recovery(target, name)
        except stacks.StackError as e:
            problems.append(f"did not start: {str(e).splitlines()[0]}")
        finally:
            services.start(name, quiet=True)
        checks.append(Check(label, not problems, "; ".join(problems) or
                            f"started, /hello served, 503 while down, recovered within {RECOVERY_WITHIN:.0f}s"))
        print(f"  {'ok  ' if not problems else 'FAIL'}  {label}" + ("" if not problems else f": {checks[-1].detail}"),
              flush=True)
    return checks


@dataclass(frozen=True)
class ErrorCase:
    """A backend that is up answering the read with `reply`: the contract's `status`, never the other one."""
    label: str
    backend: str
    reply: str   # error_proxy's "error" or "busy"; "sql": MariaDB's own error, the table renamed away
    status: int


BACKEND_ERROR_CASES = (
    ErrorCase("backend error: redis -ERR → 500", "redis", "error", 500),
    ErrorCase("backend busy: redis -LOADING → 503", "redis", "busy", 503),
    ErrorCase("backend error: memcached SERVER_ERROR (binary: status 0x0084) → 500", "memcache", "error", 500),
    ErrorCase("backend error: mysql 1146 no such table → 500", "mysql", "sql", 500),
)


def check_backend_errors(target: Target, cases=BACKEND_ERROR_CASES) -> list[Check]:
    """A backend that is up but answers the read with an error is not unavailable: the contract's 500,
    within the deadline, not 503; one that answers it is busy (Redis -LOADING) is unavailable: 503
    (CONTRACT.md, "Unavailable, busy, or an error"); and 200 again once it answers normally. Redis and memcached
    answer through error_proxy (the stack started behind it: BEHIND_ERROR_PROXIES), MariaDB itself
    (its table renamed away: error 1146)."""
    checks = []
    for i, case in enumerate(cases):
        first_id = 260 + 10 * i
        problems, said = [], ""
        if case.reply == "sql":
            if case.backend not in target.services:
                checks.append(Check(case.label, False, f"{case.backend} is external (EXTERNAL_SERVICES): "
                                    "cannot make it fail here", skipped=True))
                continue
            with backends.answering_errors(case.backend):
                problems += [f"while {case.backend} answers errors: {p}"
                             for p in _expect_error(target, case.backend, first_id, case.status)]
        else:
            proxy = target.error_proxies[case.backend] if target.error_proxies else None
            if proxy is None:
                checks.append(Check(case.label, False, "not run: the stack was not started behind the error proxies"))
                continue
            with proxy.answering(case.reply):
                problems += [f"while the proxy answers {case.reply} replies: {p}"
                             for p in _expect_error(target, case.backend, first_id, case.status)]
            said = proxy.shown()
            if not proxy.answered:
                problems.append(f"no read reached the error proxy (does the stack read {case.backend.upper()}_PORT?)")
            problems += [f"the error proxy could not follow: {p}" for p in proxy.problems]
        problems += _expect_recovery(target, case.backend)
        checks.append(Check(case.label, not problems, "; ".join(problems) or
                            f"{case.status} within the deadline" + (f": {said};" if said else ",")
                            + f" /hello served, 200 within {RECOVERY_WITHIN:.0f}s after"))
    return checks


CHECKS = [check_cases, check_no_caching, check_date, check_keep_alive, check_pipelining, check_http10,
          check_connection_close, check_sleep_waits, check_concurrency, *protocol.CHECKS, check_outages,
          check_start_with_backend_down, check_backend_errors]
# What a multi-host run proves from a client host before its load, across the network: every byte
# of every case, and the HTTP behaviour a benchmark depends on. The outage, backend-error and
# protocol-limit checks need the backends' processes and the stack started with short limits:
# the one-box `make verify` proves those, on every stack, in CI.
ACROSS_NETWORK = [check_cases, check_no_caching, check_date, check_keep_alive, check_pipelining, check_http10,
                  check_connection_close, check_sleep_waits, check_concurrency]
# Checks that run on a second start of the stack, its Redis and memcached reached through
# error_proxy (transparent until a check tells it otherwise). Every other check talks to the
# backends directly: a stopped backend must really refuse connections, which a proxy cannot.
BEHIND_ERROR_PROXIES = {check_backend_errors}
# Checks that start the stack themselves (with a backend down), after the others.
STARTING = {check_start_with_backend_down}


def run_checks(target: Target, checks=CHECKS, report=print) -> list[Check]:
    warm_up(target)
    results = []
    for i, fn in enumerate(checks):
        why = unanswered(target) if i else None
        if why:
            produced = [Check(f.__name__.removeprefix("check_"), False, f"not run: {why}", stopped_answering=True)
                        for f in checks[i:]]
        else:
            try:
                produced = fn(target)
            except Exception as e:  # a check that crashes is a failed check, with its reason
                produced = [Check(fn.__name__.removeprefix("check_"), False, f"{type(e).__name__}: {e}")]
        for c in produced:
            report(f"  {c.label}  {c.name}" + (f": {c.detail}" if c.detail and (not c.ok or c.skipped) else ""))
            results.append(c)
        if why:
            break
    return results


# ---------------------------------------------------------------- whole stacks

def result_path(stack_name: str):
    return RUN_DIR / "verify" / f"{stack_name}.json"


def verify_stack(stack: stacks.Stack, build_first: bool = True, checks=CHECKS) -> tuple[bool, list[Check]]:
    """(accepted, checks): accepted when every check passed, was skipped, or failed only in the
    deviations the manifest declares (Check.accepted)."""
    print(f"== {stack.name} ({stack.framework})", flush=True)
    results: list[Check] = []
    try:
        if build_first:
            print(f"  building ...", flush=True)
            stacks.build(stack)
        for name in SERVICES:
            backends.seed(name)  # undo whatever an interrupted run may have left tampered
        # Short time limits, so that the protocol checks' waits take seconds; descriptors enough
        # for the many-connections check, inherited by the stack.
        limits = protocol.LIMITS
        raise_nofile(limits.idle_connections * 2)
        direct = [c for c in checks if c not in BEHIND_ERROR_PROXIES | STARTING]
        proxied = [c for c in checks if c in BEHIND_ERROR_PROXIES]
        if direct:
            results += _run_started(stack, direct, limits.stack_env())
        if check_start_with_backend_down in checks:
            print("  started with each backend down in turn ...", flush=True)
            results += check_start_with_backend_down(stack, limits.stack_env())
        if proxied and any(c.stopped_answering for c in results):
            results += [Check(f.__name__.removeprefix("check_"), False, f"not run: {STOPPED_ANSWERING}",
                              stopped_answering=True) for f in proxied]
        elif proxied:
            print("  started again, Redis and memcached behind the error proxies ...", flush=True)
            with error_proxy.ErrorProxies(settings()) as proxies:
                results += _run_started(stack, proxied, {**limits.stack_env(), **proxies.env()}, proxies)
    except (stacks.StackError, services.ServiceError) as e:
        results.append(Check("build and start", False, str(e)))
        print(f"  FAIL  build and start: {e}")
    ok = all(c.accepted for c in results)
    skipped = [c.name for c in results if c.skipped]
    known = [c for c in results if c.known_deviation]
    path = result_path(stack.name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"stack": stack.name, "ok": ok, "complete": not skipped,
                                "finished": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                                "deviations": [d for c in known for d in c.deviations],
                                "checks": [asdict(c) for c in results]}, ensure_ascii=False, indent=1))
    print(f"  => {stack.name}: {verdict_line(results)}", flush=True)
    return ok, results


def _run_started(stack: stacks.Stack, checks, env: dict[str, str], proxies=None) -> list[Check]:
    """Start the stack with `env`, run `checks` on it, stop it; on failure show what it did."""
    limits = protocol.LIMITS
    with stacks.start(stack, env=env) as running:
        target = Target(stack.name, stack.host, stack.port, head_timeout_s=limits.head_timeout_ms / 1000,
                        idle_timeout_s=limits.idle_timeout_ms / 1000, pids=lambda: procstats.tree(running.pid),
                        deviations=deviations.by_case(stack.deviations), error_proxies=proxies)
        results = run_checks(target, checks)
        if any(c.stopped_answering for c in results) and (dump := running.stall_dump()):
            print("  what the server is doing (stall_dump):\n" + textwrap.indent(dump, "  | "))
        if not all(c.accepted for c in results):
            print(f"  last lines of {running.log}:\n" + textwrap.indent(services.tail(running.log), "  | "))
    return results


def verdict_line(results: list[Check]) -> str:
    """`VERIFIED WITH KNOWN DEVIATIONS; 27 passed, 3 with known deviations (4 cases), 0 failed, 0 skipped`,
    `VERIFIED; 30 passed, …` or `FAILED; …`."""
    ok = all(c.accepted for c in results)
    skipped = sum(c.skipped for c in results)
    known = [c for c in results if c.known_deviation]
    verdict = "FAILED" if not ok else "VERIFIED" + (" WITH KNOWN DEVIATIONS" if known else "") + (
        " (incomplete: skipped checks)" if skipped else "")
    cases = sum(len(c.deviations) for c in known)
    return (f"{verdict}; {sum(c.ok and not c.skipped for c in results)} passed, "
            + (f"{len(known)} with known deviations ({cases} case{'s' if cases != 1 else ''}), " if known else "")
            + f"{sum(not c.accepted for c in results)} failed, {skipped} skipped")


class Verdicts(dict):
    """verify_all's answer: stack -> accepted, true when all are; `deviations`: stack -> the declared
    deviations it showed (only stacks that showed some)."""

    def __init__(self):
        super().__init__()
        self.deviations: dict[str, list[dict]] = {}

    def __bool__(self) -> bool:
        return len(self) > 0 and all(self.values())


def verify_all(selected: list[stacks.Stack], build_first: bool = True, skipped: dict | None = None,
               checks=CHECKS) -> Verdicts:
    verdicts = Verdicts()
    if not selected:
        print("no available stack to verify", file=sys.stderr)
        return verdicts
    services.up()
    try:
        for stack in selected:
            verdicts[stack.name], results = verify_stack(stack, build_first, checks)
            if known := [d for c in results if c.known_deviation for d in c.deviations]:
                verdicts.deviations[stack.name] = known
    finally:
        services.up()  # an outage check interrupted half-way must not leave a backend down
    print("\nverification summary:")
    for name, ok in verdicts.items():
        known = verdicts.deviations.get(name)
        if not ok:
            shown = "FAILED"
        elif known:
            shown = (f"verified with {len(known)} known deviation{'s' if len(known) != 1 else ''}: "
                     + "; ".join(f"{d['case']} -> {d['observed']} ({d['upstream']})" for d in known))
        else:
            shown = "verified"
        print(f"  {name:14} {shown}")
    for name, reason in (skipped or {}).items():
        print(f"  {name:14} NOT RUN: {reason}")
    return verdicts
