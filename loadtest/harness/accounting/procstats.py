"""CPU time and memory: of a process tree, of known processes, of the machine (through psutil).

Two things psutil does not give stay hand-written: the session a process belongs to (os.getsid:
a stack's workers whose parent already exited are found by it) and the state of every thread
(psutil reports the process's state, which is its main thread's; services.py needs all of them).
"""
import os
import threading
import time
from dataclasses import dataclass, field

import psutil

from harness.accounting.stats import median

GONE = (psutil.NoSuchProcess, psutil.ZombieProcess, psutil.AccessDenied, ProcessLookupError)


@dataclass(frozen=True)
class Proc:
    """One process in a snapshot of the machine's processes."""
    ppid: int
    session: int
    started: float       # creation time: tells a process from a later one with the same pid
    cpu_s: float         # user + system of all its threads
    reaped_cpu_s: float  # user + system of the children it has waited for


def thread_states(pid: int) -> list[str]:
    """The state letter (R, S, D, T, ...) of each live thread of a process (FileNotFoundError when
    the process is gone)."""
    states = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                raw = f.read()
        except (FileNotFoundError, ProcessLookupError):
            continue  # the thread exited meanwhile
        states.append(raw[raw.rindex(")") + 2])  # comm may hold spaces and ')': the state follows the last one
    return states


def cpu_seconds(pid: int) -> float:
    """utime + stime of one live process (all its threads), in seconds; 0 when it is gone."""
    try:
        t = psutil.Process(pid).cpu_times()
    except GONE:
        return 0.0
    return t.user + t.system


def processes() -> dict[int, Proc]:
    """Every live process, read once: one snapshot that tree(), tree_cpu_seconds() and
    other_processes_cpu() can share."""
    out = {}
    # process_iter keeps each process's psutil object (and its creation time) from one call to the
    # next and reads the rest from one /proc/<pid>/stat: as cheap as reading /proc by hand.
    for p in psutil.process_iter(["ppid", "create_time", "cpu_times"]):
        t = p.info["cpu_times"]
        if t is None:  # access denied: not readable, as before
            continue
        try:
            session = os.getsid(p.pid)
        except ProcessLookupError:
            continue
        out[p.pid] = Proc(p.info["ppid"], session, p.info["create_time"], t.user + t.system,
                          t.children_user + t.children_system)
    return out


def tree(root: int, procs: dict | None = None) -> list[int]:
    """The root, every process in its session (the stack runs as its own session), and every descendant.

    The session catches workers whose parent already exited; the parent links catch a child
    that called setsid() itself.
    """
    procs = processes() if procs is None else procs
    members = {root} if root in procs else set()
    members |= {pid for pid, p in procs.items() if p.session == root}
    changed = True
    while changed:
        children = {pid for pid, p in procs.items() if p.ppid in members and pid not in members}
        members |= children
        changed = bool(children)
    return sorted(members)


def tree_cpu_seconds(members: list[int], procs: dict) -> float:
    return sum(procs[p].cpu_s for p in members if p in procs)


def memory_bytes(proc: psutil.Process | int) -> tuple[int, int]:
    """(RSS, PSS) of one process; (0, 0) when it is gone. PSS splits shared pages among the
    processes sharing them, so a pre-forked tree is not counted once per worker; RSS is what `ps` shows."""
    try:
        m = (proc if isinstance(proc, psutil.Process) else psutil.Process(proc)).memory_full_info()
    except GONE:
        return 0, 0
    return m.rss, m.pss


def open_descriptors(pids) -> int:
    """File descriptors open in these processes together (a process gone meanwhile counts 0)."""
    total = 0
    for pid in pids:
        try:
            total += psutil.Process(pid).num_fds()
        except GONE:
            pass
    return total


def machine_cpu_seconds() -> tuple[float, float, float, dict[int, tuple[float, float]]]:
    """(busy, steal, total) seconds over all CPUs since boot, and (busy, total) per CPU; busy excludes
    idle and iowait and includes steal (time the hypervisor gave to another guest). Guest time is
    already inside user and nice, so it is not added again. psutil numbers the CPUs in the order
    /proc/stat lists the online ones: with a CPU offline, the numbers after it shift."""
    def busy_total(t):
        total = t.user + t.nice + t.system + t.idle + t.iowait + t.irq + t.softirq + t.steal
        return total - t.idle - t.iowait, total
    machine = psutil.cpu_times()
    busy_all, total_all = busy_total(machine)
    per = {i: busy_total(t) for i, t in enumerate(psutil.cpu_times(percpu=True))}
    return busy_all, machine.steal, total_all, per


def other_processes_cpu(exclude: set[int], procs: dict | None = None) -> dict[int, tuple[float, float]]:
    """pid -> (start time, CPU seconds including reaped children) of every user-space process
    outside `exclude`. Kernel threads are left out: while a benchmark runs, theirs is mostly the
    run's own loopback traffic (ksoftirqd), not other work."""
    procs = processes() if procs is None else procs
    return {pid: (p.started, p.cpu_s + p.reaped_cpu_s) for pid, p in procs.items()
            if pid not in exclude and pid != 2 and p.ppid != 2}


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

    def _members(self) -> list[psutil.Process]:
        out = []
        for pid in tree(self.root):
            try:
                out.append(psutil.Process(pid))
            except GONE:
                pass
        return out

    def _run(self):
        t0 = time.monotonic()
        members = self._members()
        n = 0
        while not self._stop.is_set():
            if n % 10 == 0:  # re-walk the tree now and then: cheap enough, and catches late forks
                members = self._members()
            rss = pss = 0
            for p in members:
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
    return {"peak_rss_bytes": max(s[1] for s in samples), "steady_rss_bytes": int(median([s[1] for s in half])),
            "peak_pss_bytes": max(s[2] for s in samples), "steady_pss_bytes": int(median([s[2] for s in half])),
            "samples": len(samples)}
