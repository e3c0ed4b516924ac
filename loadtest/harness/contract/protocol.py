"""Protocol hygiene (CONTRACT.md, "Protocol hygiene"): sizes, framing, time limits, bounded work per
client, many connections.

These checks write raw bytes, including what a well-behaved client never sends, and watch how the
server answers and when it closes. Every number they probe with is a field of `Limits`.
"""
import concurrent.futures
import os
import selectors
import socket
import threading
import time
from dataclasses import dataclass

import h11

from harness import contract
from harness.accounting import procstats
from harness.config import raise_nofile
from harness.contract.checking import Check, Target, case_problems, show_bytes, summarize
from harness.contract.http_client import HttpError, PeerClosed, Response, read_response


@dataclass(frozen=True)
class Limits:
    """The contract's numbers, and the settings of the checks that probe them."""
    served_head: int = 8192            # a head up to this many bytes is served
    max_line: int = 8192               # a longer request line is 414
    max_head: int = 16384              # a longer head is 431
    head_timeout_ms: int = 2000        # what the verifier starts stacks with (HEAD_TIMEOUT_MS)
    idle_timeout_ms: int = 15000       # (IDLE_TIMEOUT_MS): long enough to open the many connections
    close_within: float = 2.0          # a refusal's close, and slack on every time limit (busy 2-core box)
    settle: float = 0.5                # after a 2xx: how long to look for an answer nobody asked for
    idle_not_before: float = 0.8       # an idle connection must still be open at this share of the timeout
    trickle_clients: int = 64          # clients trickling a head, one byte each...
    trickle_every: float = 0.1         # ...this often
    answer_within: float = 3.0         # GET /hello on another connection meanwhile (a stall of seconds fails)
    pipeline_bound: int = 32 << 20     # request bytes a non-reading client may get the server to take in
    pipeline_quiet: float = 3.0        # no progress this long: the server stopped reading
    pipeline_max_s: float = 60.0
    disconnect_clients: int = 64       # per kind of request abandoned mid-way
    idle_connections: int = 10_000
    open_at_once: int = 256            # connections being opened at any one time
    fd_margin: int = 64                # descriptors a pool may open or close meanwhile

    def stack_env(self) -> dict[str, str]:
        """What the verifier starts a stack with, so that the time checks take seconds."""
        return {"HEAD_TIMEOUT_MS": str(self.head_timeout_ms), "IDLE_TIMEOUT_MS": str(self.idle_timeout_ms)}


LIMITS = Limits()
REFUSED = {"head": 431, "line": 414, "framing": 400, "timeout": 408, "invalid": 400, "method": 501, "version": 505}


# ---------------------------------------------------------------- raw exchanges

@dataclass
class Outcome:
    responses: list[Response]
    closed: bool       # the server ended the connection (FIN or reset) within close_within of its last answer
    problem: str = ""  # a response that could not be read: malformed, or none in time

    def describe(self) -> str:
        got = ", ".join(str(r.status) for r in self.responses) or "no response"
        return f"{got}; {'closed' if self.closed else 'left open'}" + (f"; {self.problem}" if self.problem else "")


def request_head(target: str, headers: list[tuple[str, str]] = (), method: str = "GET", host: str = "verify") -> bytes:
    return (f"{method} {target} HTTP/1.1\r\nHost: {host}\r\n".encode()
            + b"".join(f"{n}: {v}\r\n".encode() for n, v in headers) + b"\r\n")


def padded_head(total: int, line_pad: bool = False, lines: int = 1, path: str = "/hello") -> bytes:
    """A GET whose head is exactly `total` bytes: the padding goes into the query string (line_pad)
    or into `lines` header lines of nearly equal length."""
    if line_pad:
        base = request_head(f"{path}?pad=")
        return request_head(f"{path}?pad=" + "a" * (total - len(base)))
    base = request_head(path, [(f"X-Pad-{i}", "") for i in range(lines)])
    extra = total - len(base)
    sizes = [extra // lines + (i < extra % lines) for i in range(lines)]
    return request_head(path, [(f"X-Pad-{i}", "a" * n) for i, n in enumerate(sizes)])


def long_line(length: int) -> bytes:
    """A GET /hello whose request line (without CRLF) is `length` bytes."""
    prefix, suffix = "GET /hello?pad=", " HTTP/1.1"
    return request_head("/hello?pad=" + "a" * (length - len(prefix) - len(suffix)))


def exchange(target: Target, data: bytes, methods: list[str] | None = None, limits: Limits = LIMITS,
             timeout: float = 5.0) -> Outcome:
    """Write `data` (from a thread: a server that stops reading must not block us), then read every
    response until the server closes, or it sends nothing more for a while after the expected ones
    (`settle` after a 2xx, `close_within` after anything else)."""
    methods = methods or ["GET"]
    sock = socket.create_connection((target.host, target.port), timeout=timeout)
    parser = h11.Connection(h11.CLIENT)
    writer = threading.Thread(target=_send_quietly, args=(sock, data), daemon=True)
    writer.start()
    responses, closed, problem = [], False, ""
    try:
        while True:
            method = methods[len(responses)] if len(responses) < len(methods) else "GET"
            # Past the expected answers: after a refusal (or another error) the close may take a
            # moment; after a 2xx, a short look for anything unasked-for is enough.
            if len(responses) < len(methods):
                wait = timeout
            else:
                wait = limits.settle if 200 <= responses[-1].status < 300 else limits.close_within
            try:
                parser.send(h11.Request(method=method, target="/", headers=[("Host", "verify")]))
                parser.send(h11.EndOfMessage())
            except h11.LocalProtocolError:  # the last response said it ends the connection
                closed = closes(sock, limits.close_within)
                break
            resp, ended, problem = _read_one(sock, parser, wait)
            if resp is not None:
                responses.append(resp)
            if ended:
                closed = True
                break
            if resp is None:
                if len(responses) < len(methods) and not problem:
                    problem = f"no response within {wait:.1f}s"
                elif len(responses) >= len(methods):
                    problem = ""  # nothing more, and the connection stayed open
                break
            if parser.our_state is h11.DONE and parser.their_state is h11.DONE:
                parser.start_next_cycle()
    finally:
        sock.close()
    return Outcome(responses, closed, problem)


PART_PAUSE_S = 0.5  # between the parts of a request sent in parts: long enough for an early answer


def _send_quietly(sock: socket.socket, data: bytes | tuple[bytes, ...]) -> None:
    """`data`, or its parts with a pause between (a body that arrives after the head was answered)."""
    parts = data if isinstance(data, tuple) else (data,)
    try:
        for i, part in enumerate(parts):
            if i:
                time.sleep(PART_PAUSE_S)
            sock.sendall(part)
    except OSError:
        pass  # the server answered and closed before reading it all: what comes back says the rest


class _Silent(Exception):
    """Nothing more came before the deadline."""


class _EndedFirst(Exception):
    """The server ended the connection before a response began."""


def _read_one(sock, parser, wait: float) -> tuple[Response | None, bool, str]:
    """(response or None, whether the server ended the connection, problem)."""
    deadline, eof = time.monotonic() + wait, False

    def receive() -> bytes:
        nonlocal eof
        left = deadline - time.monotonic()
        if left <= 0:
            raise _Silent
        sock.settimeout(left)
        try:
            data = sock.recv(65536)
        except socket.timeout:
            raise _Silent from None
        except ConnectionResetError:
            data = b""
        if not data and parser.their_state is h11.SEND_RESPONSE and not parser.trailing_data[0]:
            raise _EndedFirst
        eof = eof or not data  # a body delimited by the close: the response ends with the connection
        return data

    try:
        head, body = read_response(parser, receive)
    except _Silent:
        return None, False, ""
    except (_EndedFirst, PeerClosed):
        return None, True, ""
    except HttpError as e:
        return None, False, str(e)
    return Response.from_h11(head, body), eof, ""


def closes(sock: socket.socket, wait: float) -> bool:
    """True when the server ends the connection (FIN or reset) within `wait`; what it sends before is ignored."""
    sock.settimeout(max(wait, 0.001))
    try:
        while sock.recv(65536):
            pass
        return True
    except socket.timeout:
        return False
    except OSError:  # reset
        return True


# ---------------------------------------------------------------- outcomes against the contract

def served(target: Target, case_name: str, outcome: Outcome) -> list[str]:
    """Answered like the golden case, and the connection kept."""
    if outcome.problem or not outcome.responses:
        return [outcome.describe()]
    problems = case_problems(target, contract.case(case_name), outcome.responses[0])
    if len(outcome.responses) > 1:
        problems.append(f"{len(outcome.responses) - 1} more response(s) than requests")
    if outcome.closed:
        problems.append("the server closed the connection after serving it")
    return problems


def refused(status: int, outcome: Outcome) -> list[str]:
    """Answered `status` (only the status is compared: see CONTRACT.md, Refusals), then closed."""
    problems = []
    if not outcome.responses:
        problems.append("closed without an answer" if outcome.closed else outcome.describe())
        return problems
    first = outcome.responses[0]
    if first.status != status:
        problems.append(f"status {first.status}, expected {status} (body {show_bytes(first.body, 60)})")
    if len(outcome.responses) > 1:
        problems.append(f"answered {len(outcome.responses) - 1} more request(s) after the refusal "
                        f"({', '.join(str(r.status) for r in outcome.responses[1:])})")
    if not outcome.closed:
        problems.append(f"connection left open after the {first.status}")
    return problems


def refused_or_served(target: Target, outcome: Outcome) -> list[str]:
    """Refused with 400 and closed, or served as GET /hello: where the contract allows either."""
    if outcome.responses and outcome.responses[0].status == 400:
        return refused(400, outcome)
    return served(target, "hello", outcome)


def observed(outcome: Outcome) -> str:
    """What a case got, in the words a manifest's [[deviation]] declares it with (deviations.OBSERVED):
    `NNN` (the only answer, then the connection closed), `NNN open` (the only answer, the connection
    left open), `close` (closed without an answer), `no answer` (neither). Anything else (several
    answers, a malformed one) is described in words no declaration can match."""
    if outcome.problem.startswith("malformed"):
        return outcome.problem
    statuses = [str(r.status) for r in outcome.responses]
    if len(statuses) > 1:
        return f"{', '.join(statuses)} ({'closed' if outcome.closed else 'left open'})"
    if not statuses:
        return "close" if outcome.closed else "no answer"
    return statuses[0] + ("" if outcome.closed else " open")


def _run_cases(name: str, target: Target, cases: list[tuple[str, bytes, list[str] | None, object]],
               limits: Limits) -> Check:
    """Every case; a case the stack's manifest declares as a known deviation must fail exactly as
    declared (then it is listed as one, not as a failure), and a declared case that passes fails."""
    failures, deviated = [], []
    for label, data, methods, judge in cases:
        declared = target.deviations.get((name, label))
        got = None
        try:
            outcome = exchange(target, data, methods, limits)
            problems = judge(outcome)
            got = observed(outcome)
        except OSError as e:
            problems = [f"{type(e).__name__}: {e}"]
        if declared is None:
            if problems:
                failures.append(f"  {label}: " + "; ".join(problems))
        elif not problems:
            failures.append(f"  {label}: declared deviation no longer happens (declared {declared.observed!r}, "
                            f"the case passes): remove it from the manifest")
        elif got == declared.observed:
            deviated.append((declared, problems))
        else:
            failures.append(f"  {label}: declared deviation {declared.observed!r}, but observed {got or 'an error'!r}: "
                            + "; ".join(problems))
    check = summarize(failures, len(cases), name)
    if deviated:
        check.deviations = [d.asdict() for d, _ in deviated]
        shown = "\n".join(f"  {d.case}: {d.observed} ({'; '.join(p)})\n    why: {d.why}\n    upstream: {d.upstream}"
                          for d, p in deviated)
        if failures:
            check.detail += f"\nand {len(deviated)} known deviation(s), as declared:\n{shown}"
        else:
            check.ok, check.known_deviation = False, True
            check.detail = (f"{len(cases) - len(deviated)} of {len(cases)} as the contract says; {len(deviated)} "
                            f"known deviation(s), as declared in the manifest:\n{shown}")
    return check


def waivable(limits: Limits = LIMITS) -> dict[str, list[str]]:
    """The checks whose cases a manifest may declare as known deviations, with their case labels:
    the protocol-hygiene checks made of single exchanges. The others (time limits, backpressure,
    descriptors, many connections) have no single observed answer to declare."""
    return {SIZES: [c[0] for c in _size_cases(None, limits)],
            FRAMING: [c[0] for c in _framing_cases(None, limits)],
            BODIES: [c[0] for c in _body_cases(None, limits)],
            VALIDITY: [c[0] for c in _validity_cases(None, limits)]}


# ---------------------------------------------------------------- sizes

SIZES = "sizes (served to 8 KiB; 414 and 431 beyond the limits)"
FRAMING = "framing (RFC 9112: 400 and close)"
BODIES = "request bodies (discarded or closed, never read as a request)"


def check_sizes(target: Target, limits: Limits = LIMITS) -> list[Check]:
    return [_run_cases(SIZES, target, _size_cases(target, limits), limits)]


def _size_cases(target: Target | None, limits: Limits) -> list:
    """(label, bytes, methods, judge) per case; `target` is used only when a judge runs."""
    def ok(case_name):
        return lambda o: served(target, case_name, o)

    def no(status):
        return lambda o: refused(status, o)

    query = request_head("/redis?id=3&pad=" + "a" * 2048)
    return [
        ("a 4 KB cookie", request_head("/hello", [("Cookie", "c=" + "a" * 4094)]), None, ok("hello")),
        ("a 2 KB query string on /redis", query, None, ok("redis id=3")),
        (f"a {limits.served_head}-byte head in one header line", padded_head(limits.served_head), None, ok("hello")),
        (f"a {limits.served_head}-byte head in eight header lines", padded_head(limits.served_head, lines=8), None,
         ok("hello")),
        (f"a {limits.served_head}-byte head that is nearly all request line",
         padded_head(limits.served_head, line_pad=True), None, ok("hello ignores query")),
        (f"a request line of {limits.max_line + 1} bytes", long_line(limits.max_line + 1), None, no(REFUSED["line"])),
        ("a request line of 64 KiB", long_line(64 << 10), None, no(REFUSED["line"])),
        (f"a {limits.max_head + 1}-byte head in one header line", padded_head(limits.max_head + 1), None,
         no(REFUSED["head"])),
        (f"a {limits.max_head + 1}-byte head in eight header lines", padded_head(limits.max_head + 1, lines=8), None,
         no(REFUSED["head"])),
        ("a 64 KiB head in 32 header lines", padded_head(64 << 10, lines=32), None, no(REFUSED["head"])),
    ]


# ---------------------------------------------------------------- framing

SMUGGLED = request_head("/nope")  # answered only by a server that read a body as a request


def check_framing(target: Target, limits: Limits = LIMITS) -> list[Check]:
    return [_run_cases(FRAMING, target, _framing_cases(target, limits), limits)]


def _framing_cases(target: Target | None, limits: Limits) -> list:
    bad = lambda o: refused(REFUSED["framing"], o)

    def with_headers(*headers: tuple[str, str], method="GET", body=b""):
        return request_head("/hello", list(headers), method) + body

    def raw_header(line: bytes):
        return b"GET /hello HTTP/1.1\r\nHost: verify\r\n" + line + b"\r\n\r\n"

    def te_and_cl(o: Outcome) -> list[str]:
        # 400 and close; or framed by Transfer-Encoding alone, answered, then closed (RFC 9112 §6.3)
        if o.responses and o.responses[0].status == REFUSED["framing"]:
            return refused(REFUSED["framing"], o)
        if o.responses and o.responses[0].status == 405 and len(o.responses) == 1 and o.closed:
            return []
        return [f"expected 400 then close, or 405 (framed by Transfer-Encoding) then close without answering the "
                f"bytes after the chunked body; got {o.describe()}"]

    def invalid_name(o: Outcome) -> list[str]:
        # 400 and close, or served as if the field were absent (CONTRACT.md)
        return refused_or_served(target, o)

    chunked_then_smuggle = b"0\r\n\r\n" + SMUGGLED
    return [
        ("two different Content-Length values", with_headers(("Content-Length", "0"), ("Content-Length", "5"),
                                                            body=b"hello"), None, bad),
        ("Content-Length: abc", with_headers(("Content-Length", "abc")), None, bad),
        ("Content-Length: -1", with_headers(("Content-Length", "-1")), None, bad),
        ("Content-Length: 1.5", with_headers(("Content-Length", "1.5")), None, bad),
        ("whitespace before a colon (X-Probe : 1)", raw_header(b"X-Probe : 1"), None, bad),
        ("whitespace before a colon (Content-Length : 0)", raw_header(b"Content-Length : 0"), None, bad),
        ("a space in a field name", raw_header(b"X Probe: 1"), None, bad),
        ("a tab in a field name", raw_header(b"X\tProbe: 1"), None, bad),
        ("a control byte in a field name", raw_header(b"X\x01Probe: 1"), None, bad),
        ("DEL in a field name", raw_header(b"X\x7fProbe: 1"), None, bad),
        ("'{' in a field name", raw_header(b"X{Probe}: 1"), None, invalid_name),
        ("Transfer-Encoding with Content-Length",
         with_headers(("Transfer-Encoding", "chunked"), ("Content-Length", str(len(chunked_then_smuggle))),
                      method="POST", body=chunked_then_smuggle), ["POST"], te_and_cl),
    ]


def check_bodies(target: Target, limits: Limits = LIMITS) -> list[Check]:
    """A body is read and discarded or the connection closed after the answer; never read as a request."""
    return [_run_cases(BODIES, target, _body_cases(target, limits), limits)]


def _body_cases(target: Target | None, limits: Limits) -> list:
    def then_hello(first_case: str):
        def judge(o: Outcome) -> list[str]:
            if o.problem or not o.responses:
                return [o.describe()]
            problems = case_problems(target, contract.case(first_case), o.responses[0])
            rest = o.responses[1:]
            if any(r.status == 404 for r in rest):
                problems.append("the body was answered as a request (404 for the path inside it)")
            elif rest:
                problems += case_problems(target, contract.case("hello"), rest[0])
                if len(rest) > 1:
                    problems.append(f"{len(rest)} answers after the first, expected at most 1")
            elif not o.closed:
                problems.append("the request after the body was neither answered nor the connection closed")
            return [f"{p} (got {o.describe()})" for p in problems[:1]] + problems[1:]
        return judge

    hello = request_head("/hello")
    chunk = f"{len(SMUGGLED):x}\r\n".encode() + SMUGGLED + b"\r\n0\r\n\r\n"
    big = b"x" * (64 << 10)
    return [
        ("POST /hello with a Content-Length body that looks like a request",
         request_head("/hello", [("Content-Length", str(len(SMUGGLED)))], "POST") + SMUGGLED + hello,
         ["POST", "GET"], then_hello("POST hello")),
        ("POST /hello with a chunked body that looks like a request",
         request_head("/hello", [("Transfer-Encoding", "chunked")], "POST") + chunk + hello,
         ["POST", "GET"], then_hello("POST hello")),
        ("GET /hello with a Content-Length body that looks like a request",
         request_head("/hello", [("Content-Length", str(len(SMUGGLED)))]) + SMUGGLED + hello,
         ["GET", "GET"], then_hello("hello")),
        ("POST /hello answered before its body arrives, the rest of the body like a request",
         (request_head("/hello", [("Content-Length", str(len(SMUGGLED)))], "POST") + SMUGGLED[:8],
          SMUGGLED[8:] + hello), ["POST", "GET"], then_hello("POST hello")),
        ("PUT /sleep with a 64 KiB body",
         request_head("/sleep", [("Content-Length", str(len(big)))], "PUT") + big + hello,
         ["PUT", "GET"], then_hello("PUT sleep")),
    ]


# ---------------------------------------------------------------- request validity

VALIDITY = "request validity (RFC 9112 §3: Host, request line, target; 400 and close)"
MAX_METHOD = 32  # bytes of a method token (CONTRACT.md, Request validity)
LONG_METHOD = 100_000  # bytes of a method token that also makes the request line too long


def check_validity(target: Target, limits: Limits = LIMITS) -> list[Check]:
    return [_run_cases(VALIDITY, target, _validity_cases(target, limits), limits)]


def _validity_cases(target: Target | None, limits: Limits) -> list:
    bad = lambda o: refused(REFUSED["invalid"], o)
    ok = lambda o: served(target, "hello", o)

    def line(request_line: bytes, host: bytes | None = b"verify", more: bytes = b"") -> bytes:
        return request_line + b"\r\n" + (b"Host: " + host + b"\r\n" if host is not None else b"") + more + b"\r\n"

    def hello(**kw) -> bytes:
        return line(b"GET /hello HTTP/1.1", **kw)

    def served_then_closed(o: Outcome) -> list[str]:
        # HTTP/1.0 without keep-alive: served, and the close is the server's to make
        if o.problem or not o.responses:
            return [o.describe()]
        return case_problems(target, contract.case("hello"), o.responses[0])

    def unfolded_or_refused(o: Outcome) -> list[str]:
        # RFC 9112 §5.2: refused (400 and close), or the continuation unfolded into X-Probe's value;
        # never read as a field of its own (which would be Connection: close, ending the connection)
        return refused_or_served(target, o)

    def non_tchar_name(o: Outcome) -> list[str]:
        # as '{' in a name (CONTRACT.md, Framing): 400 and close, or served as if the field were absent
        return refused_or_served(target, o)

    return [
        ("HTTP/1.1 without Host", hello(host=None), None, bad),
        ("two Host lines, the same value", hello(more=b"Host: verify\r\n"), None, bad),
        ("two Host lines, different values", hello(more=b"Host: other\r\n"), None, bad),
        ("Host with userinfo (user@verify)", hello(host=b"user@verify"), None, bad),
        ("Host with a path (verify/x)", hello(host=b"verify/x"), None, bad),
        ("Host holding a list (verify, other)", hello(host=b"verify, other"), None, bad),
        ("an empty Host", hello(host=b""), None, bad),
        ("Host with a port (verify:8080)", hello(host=b"verify:8080"), None, ok),
        ("Host as an IPv6 literal ([::1]:8080)", hello(host=b"[::1]:8080"), None, ok),
        ("HTTP/1.0 without Host", line(b"GET /hello HTTP/1.0", host=None), None, served_then_closed),
        ("asterisk-form with GET (GET *)", line(b"GET * HTTP/1.1"), None, bad),
        ("authority-form with GET (GET verify:80)", line(b"GET verify:80 HTTP/1.1"), None, bad),
        ("absolute-form (GET http://verify/hello)", line(b"GET http://verify/hello HTTP/1.1"), None, ok),
        ("a raw byte above 0x7F in the target", line(b"GET /hello\xff HTTP/1.1"), None, bad),
        ("overlong UTF-8 in the target", line(b"GET /hello/\xc0\xaf HTTP/1.1"), None, bad),
        ("a NUL in the target", line(b"GET /hel\x00lo HTTP/1.1"), None, bad),
        ("a control byte in the target", line(b"GET /hel\x01lo HTTP/1.1"), None, bad),
        ("a method that is not a token (GE{T)", line(b"GE{T /hello HTTP/1.1"), None, bad),
        ("CONNECT verify:443", line(b"CONNECT verify:443 HTTP/1.1", host=b"verify:443"), None,
         lambda o: refused(REFUSED["method"], o)),
        (f"a {MAX_METHOD + 1}-byte method token", line(b"G" * (MAX_METHOD + 1) + b" /hello HTTP/1.1"), None,
         lambda o: refused(REFUSED["method"], o)),
        # both rules hold: the method is longer than any implemented (501) and the line longer than 8 KiB (414)
        (f"a {LONG_METHOD // 1000} kB method token", line(b"G" * LONG_METHOD + b" /hello HTTP/1.1"), None,
         lambda o: refused(o.responses[0].status if o.responses and o.responses[0].status in
                           (REFUSED["method"], REFUSED["line"]) else REFUSED["method"], o)),
        ("lower-case version (http/1.1)", line(b"GET /hello http/1.1"), None, bad),
        ("version without a minor (HTTP/1)", line(b"GET /hello HTTP/1"), None, bad),
        ("version with leading zeros (HTTP/01.01)", line(b"GET /hello HTTP/01.01"), None, bad),
        ("another major version (HTTP/2.0)", line(b"GET /hello HTTP/2.0"), None, lambda o: refused(REFUSED["version"], o)),
        ("an obs-fold continuation line", hello(more=b"X-Probe: 1\r\n Connection: close\r\n"), None,
         unfolded_or_refused),
        ("a field line without a colon", hello(more=b"X-Probe\r\n"), None, bad),
        ("a field name with a byte above 0x7F", hello(more=b"X-Pr\xf6be: 1\r\n"), None, non_tchar_name),
        ("a NUL in a field value", hello(more=b"X-Probe: a\x00b\r\n"), None, bad),
    ]


# ---------------------------------------------------------------- time

def hello_answered(target: Target, limits: Limits) -> list[str]:
    """GET /hello on a new connection answers 200 within answer_within (else why not)."""
    started = time.monotonic()
    try:
        resp = target.fetch("GET", "/hello", timeout=limits.answer_within)
    except Exception as e:  # OSError, HttpError: no answer in time is the finding
        return [f"GET /hello on another connection: {str(e) or type(e).__name__} "
                f"after {time.monotonic() - started:.1f}s"]
    return [] if resp.status == 200 else [f"GET /hello on another connection answered {resp.status}"]


def _hello_answered_meanwhile(target: Target, stop: threading.Event, limits: Limits) -> list[str]:
    """hello_answered every 0.25 s until `stop`, or the first failure."""
    while not stop.is_set():
        if problems := hello_answered(target, limits):
            return problems
        stop.wait(0.25)
    return []


def check_head_timeout(target: Target, limits: Limits = LIMITS) -> list[Check]:
    """Clients trickling a head one byte at a time are dropped within HEAD_TIMEOUT_MS of their first
    byte (408 or a close), while GET /hello keeps being answered on other connections."""
    start_bytes = b"GET /hello HTTP/1.1\r\nHost: verify\r\nX-Slow: "
    limit = target.head_timeout_s + limits.close_within
    sel = selectors.DefaultSelector()
    conns: dict[socket.socket, float] = {}
    for _ in range(limits.trickle_clients):
        s = socket.create_connection((target.host, target.port), timeout=5)
        s.sendall(start_bytes[:1])
        s.setblocking(False)
        conns[s] = time.monotonic()
        sel.register(s, selectors.EVENT_READ)
    stop = threading.Event()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        meanwhile = pool.submit(_hello_answered_meanwhile, target, stop, limits)
        open_, dropped, wrong, sent = dict(conns), [], [], {s: 1 for s in conns}
        next_byte = time.monotonic()
        while open_ and time.monotonic() - min(open_.values()) < limit + 1:
            for key, _ in sel.select(timeout=max(0.0, next_byte - time.monotonic())):
                s = key.fileobj
                try:
                    data = s.recv(4096)
                except (ConnectionResetError, BlockingIOError):
                    data = b""
                if data and not data.startswith((b"HTTP/1.1 408", b"HTTP/1.0 408")):
                    wrong.append(show_bytes(data, 40))
                dropped.append(time.monotonic() - open_.pop(s))  # a 408 counts: the close follows it
                sel.unregister(s)
            if time.monotonic() >= next_byte:
                next_byte += limits.trickle_every
                for s in list(open_):
                    byte = start_bytes[sent[s]:sent[s] + 1] or b"a"
                    try:
                        s.send(byte)
                        sent[s] += 1
                    except (BlockingIOError, OSError):
                        pass
        stop.set()
        problems = meanwhile.result()
    for s in conns:
        s.close()
    sel.close()
    if open_:
        problems.insert(0, f"{len(open_)} of {len(conns)} trickling clients still connected "
                           f"{limit + 1:.1f}s after their first byte (HEAD_TIMEOUT_MS {target.head_timeout_s * 1000:.0f})")
    late = [t for t in dropped if t > limit]
    if late:
        problems.append(f"{len(late)} dropped only after {max(late):.1f}s (limit {limit:.1f}s)")
    if wrong:
        problems.append(f"{len(wrong)} answered something other than 408 before closing: {wrong[0]}")
    detail = "; ".join(problems) or (f"{len(dropped)} trickling clients dropped after {min(dropped):.1f}–"
                                     f"{max(dropped):.1f}s; /hello answered meanwhile")
    return [Check(f"head timeout ({limits.trickle_clients} clients trickling a head)", not problems, detail)]


def _close_times(socks: dict[str, socket.socket], since: float, until: float) -> dict[str, float]:
    """When (seconds after `since`) each socket was closed by the server, watching until `until`."""
    sel = selectors.DefaultSelector()
    for name, s in socks.items():
        s.setblocking(False)
        sel.register(s, selectors.EVENT_READ, name)
    closed: dict[str, float] = {}
    while len(closed) < len(socks) and time.monotonic() < until:
        for key, _ in sel.select(timeout=max(0.0, until - time.monotonic())):
            try:
                more = key.fileobj.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                more = b""
            if not more:
                closed[key.data] = time.monotonic() - since
                sel.unregister(key.fileobj)
    sel.close()
    return closed


def check_idle_timeout(target: Target, limits: Limits = LIMITS) -> list[Check]:
    """A kept-alive connection is closed after IDLE_TIMEOUT_MS of silence, not sooner; a new
    connection that sends nothing is closed after at most the longer of the two timeouts."""
    idle, head = target.idle_timeout_s, target.head_timeout_s
    problems = []
    kept = target.connect()
    silent = socket.create_connection((target.host, target.port), timeout=5)
    try:
        silent_since = time.monotonic()
        resp = kept.request("GET", "/hello")
        if resp.status != 200:
            problems.append(f"GET /hello answered {resp.status}")
        since = time.monotonic()
        closed = _close_times({"kept": kept.sock, "silent": silent}, since,
                              since + max(idle, head) + limits.close_within)
    finally:
        kept.close()
        silent.close()
    kept_at = closed.get("kept")
    if kept_at is None:
        problems.append(f"the kept-alive connection was still open after {idle + limits.close_within:.1f}s of "
                        f"silence (IDLE_TIMEOUT_MS {idle * 1000:.0f})")
    elif kept_at < idle * limits.idle_not_before:
        problems.append(f"the kept-alive connection was closed after {kept_at:.1f}s of silence, before "
                        f"{idle * limits.idle_not_before:.1f}s (IDLE_TIMEOUT_MS {idle * 1000:.0f})")
    elif kept_at > idle + limits.close_within:
        problems.append(f"the kept-alive connection was closed only after {kept_at:.1f}s of silence "
                        f"(IDLE_TIMEOUT_MS {idle * 1000:.0f})")
    silent_at = closed.get("silent")
    silent_at = None if silent_at is None else silent_at + since - silent_since
    if silent_at is None:
        problems.append(f"a new connection that sent nothing was still open after "
                        f"{max(idle, head) + limits.close_within:.1f}s")
    detail = "; ".join(problems) or (f"kept-alive connection closed after {kept_at:.1f}s of silence, a silent new "
                                     f"one after {silent_at:.1f}s (IDLE_TIMEOUT_MS {idle * 1000:.0f}, "
                                     f"HEAD_TIMEOUT_MS {head * 1000:.0f})")
    return [Check("idle timeout (kept-alive and new silent connections)", not problems, detail)]


# ---------------------------------------------------------------- bounded work per client

def check_pipeline_flood(target: Target, limits: Limits = LIMITS) -> list[Check]:
    """Pipelined GET /hello written without reading a single answer: a server that keeps taking them
    in past pipeline_bound buffers without bound."""
    one = request_head("/hello")
    chunk = one * (65536 // len(one))
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)  # fixed small buffers: the kernel's share stays small
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    s.settimeout(5)
    s.connect((target.host, target.port))
    s.setblocking(False)
    written, started, last_progress, problems = 0, time.monotonic(), time.monotonic(), []
    sel = selectors.DefaultSelector()
    sel.register(s, selectors.EVENT_WRITE)
    try:
        while written < limits.pipeline_bound:
            now = time.monotonic()
            if now - last_progress > limits.pipeline_quiet:
                break
            if now - started > limits.pipeline_max_s:
                problems.append(f"still taking requests in after {limits.pipeline_max_s:.0f}s ({written >> 20} MiB)")
                break
            if not sel.select(timeout=0.2):
                continue
            try:
                n = s.send(chunk[written % len(chunk):])  # resume mid-chunk: the stream stays whole requests
            except BlockingIOError:
                continue
            except OSError as e:
                problems.append(f"the server ended the connection after taking in {written >> 10} KiB: "
                                f"{type(e).__name__} (it should stop reading, not drop the client)")
                break
            written += n
            last_progress = time.monotonic()
        else:
            problems.append(f"the server took in {written >> 20} MiB of pipelined requests without their answers "
                            f"being read (bound {limits.pipeline_bound >> 20} MiB): it buffers without bound")
        problems += hello_answered(target, limits)  # the stuck client holds up nobody else
    finally:
        sel.close()
        s.close()
    detail = "; ".join(problems) or f"stopped reading after {written >> 10} KiB ({written // len(one)} requests)"
    return [Check("pipelining without reading (backpressure)", not problems, detail)]


def open_descriptors(target: Target) -> int | None:
    if target.pids is None:
        return None
    return procstats.open_descriptors(target.pids())


def _descriptors_back(target: Target, baseline: int | None, limits: Limits, wait: float) -> str | None:
    """None when the server's descriptors came back to baseline (+ margin) within `wait`, else why not."""
    if baseline is None:
        return None
    deadline = time.monotonic() + wait
    while True:
        now = open_descriptors(target)
        if now <= baseline + limits.fd_margin:
            return None
        if time.monotonic() > deadline:
            return f"{now} open descriptors {wait:.0f}s later, {baseline} before (margin {limits.fd_margin})"
        time.sleep(0.2)


def _abandon(target: Target, data: bytes, reset: bool) -> None:
    s = socket.create_connection((target.host, target.port), timeout=5)
    if reset:  # an abrupt end (RST) instead of a FIN
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    s.sendall(data)
    s.close()


def check_disconnects(target: Target, limits: Limits = LIMITS) -> list[Check]:
    """Clients that vanish mid-head or mid-request (with a FIN or a reset) leave nothing held: the
    descriptors come back, and every endpoint answers as before (no pool slot kept)."""
    baseline = open_descriptors(target)
    kinds = [("mid-head", b"GET /hello HTTP/1.1\r\nHost: ver")] + [
        (f"during /{ep}", request_head(f"/{ep}" + ("" if ep == "sleep" else "?id=12"))) for ep in
        ("sleep", "redis", "mysql", "memcache")]
    problems = []
    with concurrent.futures.ThreadPoolExecutor(32) as pool:
        for label, data in kinds:
            jobs = [pool.submit(_abandon, target, data, i % 2 == 1) for i in range(limits.disconnect_clients)]
            errors = [str(j.exception()) for j in jobs if j.exception()]
            if errors:
                problems.append(f"{label}: {len(errors)} clients could not even connect: {errors[0]}")
    time.sleep(0.5)
    if why := _descriptors_back(target, baseline, limits, wait=10.0):
        problems.append(f"descriptors not released: {why}")
    ids = contract.greetings()

    def one(item):
        ep, i = item
        try:
            resp = target.fetch("GET", f"/{ep}?id={i}")
            if resp.status != 200 or resp.body != contract.json_body(i, ids[i]):
                return f"/{ep}?id={i}: {resp.status} {show_bytes(resp.body, 40)}"
        except Exception as e:
            return f"/{ep}?id={i}: {e}"
        return None

    work = [(ep, 400 + i) for ep in ("redis", "mysql", "memcache") for i in range(limits.disconnect_clients)]
    with concurrent.futures.ThreadPoolExecutor(limits.disconnect_clients) as pool:
        failed = [f for f in pool.map(one, work) if f]
    if failed:
        problems.append(f"afterwards {len(failed)} of {len(work)} concurrent data requests failed: {failed[0]}")
    counted = "" if baseline is not None else " (descriptors not counted: the stack's processes are unknown)"
    n = limits.disconnect_clients * len(kinds)
    return [Check("clients that disconnect mid-request release what they held", not problems,
                  "; ".join(problems) or f"{n} abandoned requests; all endpoints answer afterwards{counted}")]


# ---------------------------------------------------------------- many connections

def _complete(data: bytes) -> bool:
    """Whether `data` holds a whole response with a Content-Length body."""
    head, sep, body = data.partition(b"\r\n\r\n")
    if not sep:
        return False
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip() or 0)
    return False


def _open_idle(target: Target, count: int, limits: Limits) -> tuple[list[socket.socket], list[str]]:
    """`count` connections, each having made one GET /hello and read its answer, now silent."""
    request = request_head("/hello")
    sel = selectors.DefaultSelector()
    done, failures, pending, started = [], [], {}, 0
    deadline = time.monotonic() + max(60.0, count / 200)

    def give_up(s: socket.socket, why: str) -> None:
        failures.append(why)
        sel.unregister(s)
        pending.pop(s)
        s.close()

    while len(done) + len(failures) < count and time.monotonic() < deadline:
        while started < count and len(pending) < limits.open_at_once:
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            s.connect_ex((target.host, target.port))
            pending[s] = b""
            sel.register(s, selectors.EVENT_WRITE)
            started += 1
        for key, events in sel.select(timeout=1.0):
            s = key.fileobj
            if events & selectors.EVENT_WRITE:
                if err := s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR):
                    give_up(s, f"connect: {os.strerror(err)}")
                    continue
                s.send(request)
                sel.modify(s, selectors.EVENT_READ)
                continue
            try:
                data = s.recv(4096)
            except OSError as e:
                give_up(s, f"{type(e).__name__} before the answer")
                continue
            if not data:
                give_up(s, "closed before answering")
                continue
            pending[s] += data
            if _complete(pending[s]):
                answer = pending.pop(s)
                sel.unregister(s)
                if answer.startswith(b"HTTP/1.1 200"):
                    done.append(s)
                else:
                    failures.append(f"answered {show_bytes(answer[:24])}")
                    s.close()
    for s in pending:
        s.close()
    if len(done) + len(failures) < count:
        failures.append(f"{count - len(done) - len(failures)} not answered within {max(60.0, count / 200):.0f}s")
    sel.close()
    return done, failures


def check_many_connections(target: Target, limits: Limits = LIMITS) -> list[Check]:
    """idle_connections kept-alive connections held open while GET /hello is answered on others;
    afterwards the server's descriptors come back."""
    n = limits.idle_connections
    have = raise_nofile(n + 1024)
    if have < n + 256:
        return [Check(f"{n} idle connections", False, f"this process may open only {have} descriptors "
                      f"(ulimit -n): raise the hard limit to run this check", skipped=True)]
    baseline = open_descriptors(target)
    started = time.monotonic()
    idle, failures = _open_idle(target, n, limits)
    took = time.monotonic() - started
    problems = []
    try:
        if failures:
            problems.append(f"{len(failures)} of {n} connections failed: {failures[0]}")
        if took > target.idle_timeout_s * limits.idle_not_before:
            problems.append(f"opening them took {took:.1f}s, too close to IDLE_TIMEOUT_MS to tell held from closed")
        during = open_descriptors(target)
        for _ in range(10):
            if answered := hello_answered(target, limits):
                problems += answered
                break
        sel = selectors.DefaultSelector()
        for s in idle:
            sel.register(s, selectors.EVENT_READ)
        closed = len(sel.select(timeout=0.2))
        sel.close()
        if closed:
            problems.append(f"{closed} of {len(idle)} idle connections were closed or answered within "
                            f"{time.monotonic() - started:.1f}s of opening")
        if baseline is not None and during is not None and during < baseline + len(idle) - limits.fd_margin:
            problems.append(f"the server held only {during - baseline} more descriptors for {len(idle)} connections")
    finally:
        for s in idle:
            s.close()
    if why := _descriptors_back(target, baseline, limits, wait=15.0):
        problems.append(f"after closing them: {why}")
    detail = "; ".join(problems) or (f"{len(idle)} held ({took:.1f}s to open), /hello answered meanwhile, "
                                     f"descriptors back" + ("" if baseline is not None else " (not counted)"))
    return [Check(f"{n} idle connections held, /hello answered, descriptors back", not problems, detail)]


CHECKS = [check_sizes, check_framing, check_validity, check_bodies, check_head_timeout, check_idle_timeout, check_pipeline_flood,
          check_disconnects, check_many_connections]
