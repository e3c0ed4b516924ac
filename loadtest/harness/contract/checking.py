"""What every check works with: the stack under test, a check's verdict, and how a response is
compared with a golden one."""
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from harness import contract
from harness.config import SERVICES, external_services
from harness.contract.http_client import Connection, Response, fetch

IMF_FIXDATE = re.compile(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) "
                         r"\d{4} \d\d:\d\d:\d\d GMT$")


@dataclass
class Check:
    name: str
    ok: bool
    detail: str = ""
    skipped: bool = False
    stopped_answering: bool = False  # the server answered nothing more, not even GET /hello on a new connection
    # The manifest's [[deviation]]s this check's cases showed exactly as declared (as dicts). With
    # known_deviation, they were its only failures: not passed (ok is False), yet not a failure.
    deviations: list = field(default_factory=list)
    known_deviation: bool = False

    @property
    def label(self) -> str:
        return "SKIP" if self.skipped else "PASS" if self.ok else "DEVN" if self.known_deviation else "FAIL"

    @property
    def accepted(self) -> bool:
        """Passed, skipped (said so), or failed only as the manifest declares: what lets a stack through."""
        return self.ok or self.skipped or self.known_deviation


@dataclass
class Target:
    """The stack under test, as the checks see it."""
    name: str
    host: str
    port: int
    services: set = field(default_factory=lambda: set(SERVICES) - external_services())
    head_timeout_s: float = 2.0   # HEAD_TIMEOUT_MS and IDLE_TIMEOUT_MS the stack was started with
    idle_timeout_s: float = 15.0
    pids: Callable[[], list[int]] | None = None  # the server's processes, for counting descriptors; None: unknown
    # (check name, case label) -> the manifest's declared deviation (deviations.Deviation)
    deviations: dict = field(default_factory=dict)
    # The stack's Redis and memcached reached through error_proxy.ErrorProxies (the backend-error
    # checks' start), or None: started against the backends themselves.
    error_proxies: object = None

    def connect(self, timeout: float = 5.0) -> Connection:
        return Connection(self.host, self.port, timeout)

    def fetch(self, method: str, target: str, timeout: float = 5.0) -> Response:
        return fetch(self.host, self.port, method, target, timeout)


# ---------------------------------------------------------------- comparing responses

def show_bytes(data: bytes, limit: int = 160) -> str:
    text = repr(data[:limit])[2:-1]
    return text + (f"… ({len(data)} bytes)" if len(data) > limit else "")


def byte_diff(expected: bytes, actual: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(expected, actual)) if a != b), min(len(expected), len(actual)))
    lo = max(0, at - 24)
    return (f"bodies differ at byte {at} (expected {len(expected)} bytes, got {len(actual)}):\n"
            f"      expected …{show_bytes(expected[lo:at + 40])}\n"
            f"      actual   …{show_bytes(actual[lo:at + 40])}")


def differences(expected: dict, resp: Response) -> list[str]:
    """Why a response differs from a golden normalized response (empty when equal)."""
    got = resp.normalized()
    out = []
    if got["status"] != expected["status"]:
        out.append(f"status {got['status']}, expected {expected['status']}")
    want_h, got_h = expected["headers"], got["headers"]
    for name in sorted(set(want_h) | set(got_h)):
        if name not in got_h:
            out.append(f"header {name} missing (expected {want_h[name]!r})")
        elif name not in want_h:
            out.append(f"header {name}: {got_h[name]!r} is not allowed")
        elif want_h[name] != got_h[name]:
            out.append(f"header {name}: {got_h[name]!r}, expected {want_h[name]!r}")
    if got["body"] != expected["body"]:
        out.append(byte_diff(expected["body"], got["body"]))
    return out


def header_problems(target: Target, resp: Response) -> list[str]:
    """The headers that are checked apart from the golden set."""
    out = []
    for name in ("date", "server", "content-length", "content-type"):
        count = sum(1 for n, _ in resp.headers if n == name)
        if count != 1:
            out.append(f"{count} {name} headers, expected exactly 1")
    server = resp.header("server")
    if server is not None and server != target.name:
        out.append(f"Server {server!r}, expected {target.name!r}")
    date = resp.header("date")
    if date is not None and not IMF_FIXDATE.match(date):
        out.append(f"Date {date!r} is not IMF-fixdate")
    return out


def case_problems(target: Target, case: contract.Case, resp: Response) -> list[str]:
    return differences(case.golden(), resp) + header_problems(target, resp)


def summarize(failures: list[str], total: int, what: str) -> Check:
    if failures:
        shown = "\n".join(failures[:12]) + (f"\n  … and {len(failures) - 12} more" if len(failures) > 12 else "")
        return Check(what, False, f"{len(failures)} of {total} failed:\n{shown}")
    return Check(what, True, f"{total} checked")
