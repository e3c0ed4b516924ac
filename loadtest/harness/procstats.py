"""What /proc says about CPU time and memory: of a process tree, of known processes, of the machine.

Everything here reads /proc directly: one open() per process per sample, so the sampler's own
cost stays small (it is measured and reported as the harness's CPU share).
"""
import os
import threading
import time
from dataclasses import dataclass, field

CLK_TCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def _stat_fields(path: str) -> list[str] | None:
    """The fields after the command name of a /proc/.../stat file, or None when it is gone."""
    try:
        with open(path) as f:
            raw = f.read()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # comm may contain spaces and parentheses: split after the last ')'.
    return raw[raw.rindex(")") + 2:].split()


def thread_states(pid: int) -> list[str]:
    """The state letter (R, S, D, T, ...) of each live thread of a process (FileNotFoundError when
    the process is gone)."""
    fields = (_stat_fields(f"/proc/{pid}/task/{tid}/stat") for tid in os.listdir(f"/proc/{pid}/task"))
    return [f[0] for f in fields if f is not None]  # None: the thread exited meanwhile


def _fields_cpu(f: list[str]) -> float:
    # fields after comm: state(0) ppid(1) pgrp(2) session(3) ... utime(11) stime(12)
    return (int(f[11]) + int(f[12])) / CLK_TCK


def cpu_seconds(pid: int) -> float:
    """utime + stime of one live process (all its threads), in seconds; 0 when it is gone."""
    f = _stat_fields(f"/proc/{pid}/stat")
    return 0.0 if f is None else _fields_cpu(f)


def _all_pids() -> list[int]:
    return [int(p) for p in os.listdir("/proc") if p.isdigit()]


def processes() -> dict[int, list[str]]:
    """Every live process's /proc/<pid>/stat fields (after comm), read once: one snapshot that
    tree(), tree_cpu_seconds() and other_processes_cpu() can share."""
    out = {}
    for pid in _all_pids():
        f = _stat_fields(f"/proc/{pid}/stat")
        if f is not None:
            out[pid] = f
    return out


def tree(root: int, procs: dict | None = None) -> list[int]:
    """The root, every process in its session (the stack runs as its own session), and every descendant.

    The session catches workers whose parent already exited; the parent links catch a child
    that called setsid() itself.
    """
    procs = processes() if procs is None else procs
    parents = {pid: int(f[1]) for pid, f in procs.items()}
    sessions = {pid: int(f[3]) for pid, f in procs.items()}
    members = {root} if root in parents else set()
    members |= {p for p, s in sessions.items() if s == root}
    changed = True
    while changed:
        children = {p for p, pp in parents.items() if pp in members and p not in members}
        members |= children
        changed = bool(children)
    return sorted(members)


def tree_cpu_seconds(members: list[int], procs: dict) -> float:
    return sum(_fields_cpu(procs[p]) for p in members if p in procs)


def memory_bytes(pid: int) -> tuple[int, int]:
    """(RSS, PSS) of one process. PSS splits shared pages among the processes sharing them, so a
    pre-forked tree is not counted once per worker; RSS is what `ps` shows."""
    rss = pss = 0
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Rss:"):
                    rss = int(line.split()[1]) * 1024
                elif line.startswith("Pss:"):
                    pss = int(line.split()[1]) * 1024
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        pass
    return rss, pss


def machine_jiffies() -> tuple[int, int, int, dict[int, tuple[int, int]]]:
    """(busy, steal, total) over all CPUs and (busy, total) per CPU, from /proc/stat; busy excludes
    idle and iowait and includes steal (time the hypervisor gave to another guest)."""
    per = {}
    busy_all = steal_all = total_all = 0
    with open("/proc/stat") as f:
        for line in f:
            if not line.startswith("cpu"):
                break
            name, *vals = line.split()
            vals = [int(v) for v in vals[:8]]  # user nice system idle iowait irq softirq steal
            total = sum(vals)
            busy = total - vals[3] - vals[4]
            if name == "cpu":
                busy_all, steal_all, total_all = busy, vals[7], total
            else:
                per[int(name[3:])] = (busy, total)
    return busy_all, steal_all, total_all, per


def other_processes_cpu(exclude: set[int], procs: dict | None = None) -> dict[int, tuple[str, float]]:
    """pid -> (start time, CPU seconds including reaped children) of every user-space process
    outside `exclude`. Kernel threads are left out: while a benchmark runs, theirs is mostly the
    run's own loopback traffic (ksoftirqd), not other work."""
    procs = processes() if procs is None else procs
    out = {}
    for pid, f in procs.items():
        if pid in exclude or pid == 2 or int(f[1]) == 2:
            continue
        # utime(11) stime(12) cutime(13) cstime(14) ... starttime(19)
        out[pid] = (f[19], sum(int(v) for v in f[11:15]) / CLK_TCK)
    return out


def cpu_delta(before: dict, after: dict) -> float:
    """CPU seconds the processes of `after` used since `before` (a process new since then: all of it)."""
    total = 0.0
    for pid, (start, seconds) in after.items():
        prev = before.get(pid)
        total += seconds - (prev[1] if prev and prev[0] == start else 0.0)
    return max(0.0, total)


@dataclass
class MemorySampler:
    """Samples the tree's summed RSS/PSS every `interval` seconds in a thread, until stop()."""
    root: int
    interval: float = 0.5
    samples: list = field(default_factory=list)  # (t, rss, pss)

    def __post_init__(self):
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        t0 = time.monotonic()
        pids = tree(self.root)
        n = 0
        while not self._stop.is_set():
            if n % 10 == 0:  # re-walk the tree now and then: cheap enough, and catches late forks
                pids = tree(self.root)
            rss = pss = 0
            for p in pids:
                r, s = memory_bytes(p)
                rss, pss = rss + r, pss + s
            self.samples.append((round(time.monotonic() - t0, 2), rss, pss))
            n += 1
            self._stop.wait(self.interval)

    def start(self):
        self._thread.start()
        return self

    def stop(self) -> dict:
        self._stop.set()
        self._thread.join()
        return summarize_memory(self.samples)


def summarize_memory(samples) -> dict:
    """Peak over the run, and steady = the median of the second half (after start-up growth)."""
    if not samples:
        return {"peak_rss_bytes": None, "steady_rss_bytes": None, "peak_pss_bytes": None,
                "steady_pss_bytes": None, "samples": 0}
    half = samples[len(samples) // 2:]

    def median(xs):
        xs = sorted(xs)
        return xs[len(xs) // 2]
    return {"peak_rss_bytes": max(s[1] for s in samples), "steady_rss_bytes": median([s[1] for s in half]),
            "peak_pss_bytes": max(s[2] for s in samples), "steady_pss_bytes": median([s[2] for s in half]),
            "samples": len(samples)}
