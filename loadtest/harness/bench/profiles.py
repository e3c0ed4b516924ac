"""Load profiles: the shapes of load real servers meet besides keep-alive connections sending one
request at a time (the endpoint sweep). Each is a few closed-loop wrk runs with a `Shape`, measured
with the same pinning, accounting and flags, and judged by what the answers say:

- churn: `Connection: close` on every request (a new connection each), and on one in ten;
  connections per second and server CPU per connection.
- pipeline: 16 requests written at once on each connection.
- many: 4,096 and 8,192 connections on /hello, /redis and /sleep (the seeds' 5,000 to 7,000
  clients); errors and timeouts counted.
- noisy: one request in ten is one of the contract's refusal cases (an oversized head, a smuggling
  shape, a request without Host, a malformed id); valid answers per second, and no valid request
  lost or refusal served.

A profile's run is flagged when the answers show the shape was not served as the contract says:
`kept-alive` (fewer connections closed than `Connection: close` asked for), `refusal-served`
(fewer refusals than refusal cases sent), `valid-lost` (valid requests neither answered 200 nor
in flight at the end), `stalled` (requests unanswered past the generator's timeout, or two
whole seconds in which wrk sent nothing because nothing was answered: with pipelining, a server
that answers only the first of a batch), `no-answers`.
"""
from dataclasses import dataclass

from harness.contract import protocol
from harness.loadgen.wrk import Shape

DEPTH = 16
NOISE_EVERY = 10
NOISE = (
    protocol.padded_head(20_000),  # a head over 16 KiB: 431
    protocol.request_head("/hello", [("Transfer-Encoding", "chunked"), ("Content-Length", "5")], "POST")
    + b"0\r\n\r\n",  # a smuggling shape: 400
    b"GET /hello HTTP/1.1\r\n\r\n",  # HTTP/1.1 without Host: 400
    protocol.request_head("/redis?id=01"),  # a malformed id: 400 without touching Redis
)


@dataclass(frozen=True)
class Run:
    endpoint: str
    connections: int
    shape: Shape

    @property
    def label(self) -> str:
        s = self.shape
        kind = (f"close every {s.close_every}" if s.close_every else f"pipeline {s.pipeline}" if s.pipeline > 1
                else f"noise 1 in {s.noise_every}" if s.noise_every else "")
        return f"/{self.endpoint} c={self.connections} {kind}".rstrip()


@dataclass(frozen=True)
class Profile:
    name: str
    about: str
    runs: tuple
    default: bool  # part of `make bench-all` unless PROFILE says otherwise


PROFILES = {p.name: p for p in (
    # the seed 003's clients: 50, 100 and above
    Profile("churn", "a new connection for every request, at 50, 100 and 256 clients; and for one in ten",
            (*(Run("hello", c, Shape(close_every=1)) for c in (50, 100, 256)), Run("hello", 100, Shape(close_every=10))),
            True),
    Profile("pipeline", f"{DEPTH} requests in flight on each connection",
            (Run("hello", 64, Shape(pipeline=DEPTH)),), True),
    Profile("noisy", f"one request in {NOISE_EVERY} is a refusal case",
            (Run("hello", 64, Shape(noise_every=NOISE_EVERY, noise=NOISE)),), True),
    Profile("many", "4,096 and 8,192 connections",
            tuple(Run(e, c, Shape(counted=True)) for e in ("hello", "redis", "sleep") for c in (4096, 8192)), False),
)}
DEFAULT = [name for name, p in PROFILES.items() if p.default]


def select(raw: str | None) -> list[str]:
    """PROFILE's value: empty means the default ones, `none` none, `all` all, else a comma list."""
    if raw is None or raw.strip() == "":
        return list(DEFAULT)
    names = [n for n in raw.replace(" ", "").split(",") if n]
    if names == ["none"]:
        return []
    if names == ["all"]:
        return list(PROFILES)
    unknown = [n for n in names if n not in PROFILES]
    if unknown:
        raise SystemExit(f"PROFILE: unknown {unknown}; choose from {', '.join(PROFILES)}, all or none")
    return names


def judge(run: Run, record: dict) -> dict:
    """The profile's own figures and flags for one wrk run's record (from Box.closed_run)."""
    shape = record.get("shape") or {}
    answers = {int(k): v for k, v in (shape.get("answers") or {}).items()}
    seconds = record.get("duration_s") or 0
    ok_answers = answers.get(200, 0)
    # A server may close right after an answer without saying so (CONTRACT.md): wrk has then written
    # the next request on that connection and meets end-of-file, a read error, then reconnects.
    eofs = (record.get("errors") or {}).get("read", 0)
    # Sent but unanswered when wrk stopped: a batch per connection, and one more per wrk thread
    # (measured: 1,040 sent for 64 connections of 16 on one thread, on a server that never answered).
    in_flight = (run.connections + record.get("threads", 1)) * run.shape.pipeline
    cpu_s = (record.get("stats") or {}).get("server_cpu_s")
    out = {"profile_run": run.label, "answers": answers}
    if run.shape.pipeline > 1:
        # wrk times a batch, not a request, and its latency correction then takes its percentiles
        # below its own minimum, where it reads them as 0: no latency for pipelined runs
        out["latency_ms"] = None
    flags = []
    if not ok_answers:
        flags.append("no-answers")
    if run.shape.close_every:
        closed = shape.get("closes", 0) + eofs
        asked = ok_answers // run.shape.close_every
        out["connections"] = closed
        out["connections_per_s"] = round(closed / seconds, 1) if seconds else None
        # a connection's whole cost, request included, where each carries one request; with more
        # requests on each, their CPU would count as the connection's
        out["cpu_us_per_connection"] = (round(cpu_s / closed * 1e6, 1) if closed and cpu_s is not None
                                        and run.shape.close_every == 1 else None)
        if closed < asked - run.connections:
            flags.append("kept-alive")
    if run.shape.noise_every:
        out["valid_rps"] = round(ok_answers / seconds, 1) if seconds else None
        out["noise_sent"] = shape.get("sent_noise", 0)
        refused = sum(v for k, v in answers.items() if k != 200) + eofs
        if refused < out["noise_sent"] - run.connections:  # some refusal case was answered 200
            flags.append("refusal-served")
    if (record.get("errors") or {}).get("timeout") or record.get("seconds_without_sends", 0) >= 2:
        flags.append("stalled")
    lost = shape.get("sent_valid", 0) - ok_answers - eofs - in_flight
    out["valid_lost"] = max(0, lost)
    if lost > 0:
        flags.append("valid-lost")
    out["flags"] = flags
    return out
