"""Known framework deviations: cases of the protocol-hygiene checks that a stack's framework answers
otherwise, in a way no setting changes, declared in its manifest and named by their upstream bug.

    [[deviation]]
    check = "framing (RFC 9112: 400 and close)"   # the check's name, exactly as verify prints it
    case = "Content-Length: 1.5"                   # the case's label inside it, exactly as printed
    observed = "408"                               # what the stack does instead (OBSERVED below)
    why = "Swoole's reactor frames the body with strtoull() before llhttp sees the head"
    upstream = "https://github.com/swoole/swoole-src/pull/2062"

Strict, like pytest's xfail(strict=True): a declared case counts as a deviation only when it fails
with exactly the declared `observed`; one that passes, or fails otherwise, is a failure. Only the
cases of protocol.waivable() may be declared: golden bytes, headers, backend reads, outages,
backend errors, /sleep, concurrency and pipelining order never.
"""
import re
from dataclasses import asdict, dataclass

from harness.contract.protocol import waivable

FIELDS = ("check", "case", "observed", "why", "upstream")
# observed: "NNN"       answered NNN (its only answer), then closed the connection
#           "NNN open"  answered NNN (its only answer), the connection left open
#           "close"     closed the connection without an answer
#           "no answer" neither answered nor closed while the check waited
OBSERVED = re.compile(r"^(?:[1-5][0-9][0-9](?: open)?|close|no answer)$")
UPSTREAM = re.compile(r"^https?://[^\s/]+\.[^\s/]+/\S+$")


@dataclass(frozen=True)
class Deviation:
    check: str
    case: str
    observed: str
    why: str
    upstream: str

    def asdict(self) -> dict:
        return asdict(self)


def parse(entries) -> tuple[list[Deviation], list[str]]:
    """The manifest's [[deviation]] tables, validated: (deviations, problems)."""
    if not isinstance(entries, list):
        return [], ["'deviation' must be an array of tables ([[deviation]])"]
    known = waivable()
    found, problems, seen = [], [], set()
    for i, entry in enumerate(entries, 1):
        where = f"[[deviation]] {i}"
        if not isinstance(entry, dict):
            problems.append(f"{where} must be a table")
            continue
        bad = [f"{where}: unknown field '{k}' (known: {', '.join(FIELDS)})" for k in entry if k not in FIELDS]
        bad += [f"{where}: missing '{k}'" for k in FIELDS if k not in entry]
        bad += [f"{where}: '{k}' must be a non-empty string" for k in FIELDS
                if k in entry and (not isinstance(entry[k], str) or not entry[k].strip())]
        if bad:
            problems += bad
            continue
        d = Deviation(**entry)
        if d.check not in known:
            problems.append(f"{where}: check {d.check!r} may not be declared as a deviation: only the cases of "
                            f"these protocol-hygiene checks may (names as verify prints them): "
                            + "; ".join(repr(c) for c in known))
        elif d.case not in known[d.check]:
            problems.append(f"{where}: {d.check!r} has no case {d.case!r} (its cases: "
                            + "; ".join(repr(c) for c in known[d.check]) + ")")
        if not OBSERVED.match(d.observed):
            problems.append(f"{where}: observed {d.observed!r} is none of: a status ('400': its only answer, then "
                            f"closed), a status and 'open' ('400 open': the connection left open), 'close' (closed "
                            f"without an answer), 'no answer'")
        if not UPSTREAM.match(d.upstream):
            problems.append(f"{where}: upstream {d.upstream!r} must be the URL of the upstream issue or pull request")
        if (d.check, d.case) in seen:
            problems.append(f"{where}: {d.case!r} of {d.check!r} is declared twice")
        seen.add((d.check, d.case))
        found.append(d)
    return found, problems


def by_case(deviations: list[Deviation]) -> dict[tuple[str, str], Deviation]:
    """What checking.Target.deviations holds: (check, case) -> its declaration."""
    return {(d.check, d.case): d for d in deviations}
