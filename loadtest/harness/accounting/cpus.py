"""Which CPUs the server, the load generator and the backends run on, and pinning them there.

Pinning keeps the three from stealing each other's cycles in ways that change from run to run.
On 2 cores the server gets one core to itself and the generator shares the other with the
backends (they are the server's clients' and servers' side of the same work); on bigger machines
the server gets half and the others a quarter each. CPUS_SERVER / CPUS_LOADGEN / CPUS_BACKENDS
(taskset list syntax: "0-3,6") override it.
"""
import contextlib
import os
from dataclasses import dataclass


def parse_list(text: str) -> list[int]:
    out = []
    for part in text.replace(" ", "").split(","):
        if not part:
            continue
        if "-" in part:
            lo, hi = part.split("-")
            out += range(int(lo), int(hi) + 1)
        else:
            out.append(int(part))
    return sorted(set(out))


def format_list(cpus) -> str:
    return ",".join(str(c) for c in sorted(cpus))


def default_layout(available: list[int]) -> dict[str, list[int]]:
    n = len(available)
    if n == 1:
        return {"server": available, "loadgen": available, "backends": available}
    if n < 4:
        return {"server": available[:1], "loadgen": available[1:], "backends": available[1:]}
    half, quarter = n // 2, n // 4
    return {"server": available[:half], "loadgen": available[half:half + quarter],
            "backends": available[half + quarter:]}


@dataclass
class Layout:
    server: list
    loadgen: list
    backends: list
    source: str  # "default for N CPUs" or "environment"

    @classmethod
    def from_env(cls, env=None) -> "Layout":
        env = os.environ if env is None else env
        available = sorted(os.sched_getaffinity(0))
        layout = default_layout(available)
        source = f"default for {len(available)} CPUs"
        for role in ("server", "loadgen", "backends"):
            key = f"CPUS_{role.upper()}"
            if env.get(key):
                layout[role] = parse_list(env[key])
                source = "environment (CPUS_*)"
                bad = set(layout[role]) - set(available)
                if bad:
                    raise SystemExit(f"{key}={env[key]}: CPUs {sorted(bad)} are not available (have {available})")
        return cls(layout["server"], layout["loadgen"], layout["backends"], source)

    def taskset(self, role: str) -> list[str]:
        return ["taskset", "-c", format_list(getattr(self, role))]

    def shared(self) -> bool:
        return bool(set(self.server) & (set(self.loadgen) | set(self.backends)))

    def as_dict(self) -> dict:
        return {"server": format_list(self.server), "loadgen": format_list(self.loadgen),
                "backends": format_list(self.backends), "source": self.source,
                "server_shares_cpus": self.shared()}


def pin_process(pid: int, cpus) -> int:
    """Pin every thread of a running process (threads created later inherit from their creator)."""
    pinned = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return 0
    for tid in tasks:
        try:
            os.sched_setaffinity(int(tid), cpus)
            pinned += 1
        except (ProcessLookupError, PermissionError, OSError):
            pass
    return pinned


@contextlib.contextmanager
def inherited(cpus):
    """Children forked inside this block inherit `cpus`: how a stack is started pinned without
    changing how stacks.start launches it."""
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, cpus)
    try:
        yield
    finally:
        os.sched_setaffinity(0, before)
