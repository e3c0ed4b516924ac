"""One load run with its accounting: who used how much CPU and memory while the tool ran.

The tool (wrk, oha, a backend's benchmark) is a child process reaped with wait4(), whose rusage is
exactly its CPU time. The server's CPU is the delta of its whole process tree (procstats); the
backends' and the harness's own are measured the same way. Foreign is what makes a run
untrustworthy: the CPU of every other user-space process (from /proc, capped by the busy time
/proc/stat has left over) plus steal (the hypervisor serving another guest). Busy time that neither
explains is kernel work charged to no process, mostly interrupts and softirqs on an idle CPU: the
run's own loopback traffic; it is recorded, not counted as foreign.
"""
import os
import resource
import subprocess
import time
from dataclasses import asdict, dataclass, field

from harness.accounting import procstats


@dataclass
class Accounting:
    """Who the known processes are for one run."""
    server_root: int | None          # the stack's (or nginx's) process group leader
    known_pids: dict = field(default_factory=dict)  # name -> pid (backends, ...)
    server_cpus: list = field(default_factory=list)
    loadgen_cpus: list = field(default_factory=list)


@dataclass
class ToolRun:
    cmd: list
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    stats: dict


@dataclass
class Snapshot:
    """Everything read at one instant; two of them make the accounting of the time between (between()).
    The one reading used by a load run here, a soak's window boundaries and each host of a multi-host run."""
    mono: float
    tree_cpu: float                  # the trees under the roots (a stack's, nginx's, or the backends')
    known_cpu: dict                  # name -> CPU seconds of a known process (a backend)
    others: dict                     # every other user-space process (procstats.other_processes_cpu)
    busy: float                      # the machine's, since boot (procstats.machine_cpu_seconds)
    steal: float
    total: float
    per_cpu: dict
    harness_cpu: float               # this process (RUSAGE_SELF)
    children_cpu: float              # its reaped children (RUSAGE_CHILDREN): a load generator's, once reaped
    rss: int = 0                     # with memory=True: the trees' RSS and PSS, processes and start times
    pss: int = 0
    processes: int = 0
    started: dict = field(default_factory=dict)

    def as_json(self) -> dict:
        """For sending across ssh (on_host): JSON keys are strings."""
        d = asdict(self)
        d["others"] = {str(k): list(v) for k, v in self.others.items()}
        d["per_cpu"] = {str(k): list(v) for k, v in self.per_cpu.items()}
        d["started"] = {str(k): v for k, v in self.started.items()}
        return d

    @classmethod
    def from_json(cls, d: dict) -> "Snapshot":
        return cls(**{**d, "others": {int(k): tuple(v) for k, v in d["others"].items()},
                      "per_cpu": {int(k): tuple(v) for k, v in d["per_cpu"].items()},
                      "started": {int(k): v for k, v in d["started"].items()}})


def snapshot(roots: list[int], known_pids: dict, memory: bool = False) -> Snapshot:
    procs = procstats.processes()
    members = [pid for root in roots if root for pid in procstats.tree(root, procs)]
    known = {os.getpid()} | {p for p in known_pids.values() if p} | set(members)
    rss = pss = 0
    if memory:
        for pid in members:
            r, p = procstats.memory_bytes(pid)
            rss, pss = rss + r, pss + p
    busy, steal, total, per = procstats.machine_cpu_seconds()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Snapshot(time.monotonic(), procstats.tree_cpu_seconds(members, procs),
                    {n: procstats.cpu_seconds(p) for n, p in known_pids.items() if p},
                    procstats.other_processes_cpu(known, procs), busy, steal, total, per,
                    me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, rss, pss, len(members),
                    {pid: procs[pid].started for pid in members if pid in procs} if memory else {})


def between(a: Snapshot, b: Snapshot, acct: Accounting, wall: float | None = None) -> dict:
    """The accounting of the time from `a` to `b` (account()); the generator is what was reaped between.
    `wall`: the tool's own run time, when the shares are of that (default: from `a` to `b`)."""
    return account(b.mono - a.mono if wall is None else wall, b.tree_cpu - a.tree_cpu,
                   {k: b.known_cpu.get(k, 0) - v for k, v in a.known_cpu.items()},
                   max(0.0, b.children_cpu - a.children_cpu), b.harness_cpu - a.harness_cpu,
                   b.busy - a.busy, b.total - a.total, procstats.cpu_delta(a.others, b.others), b.steal - a.steal,
                   {c: (b.per_cpu[c][0] - a.per_cpu[c][0]) / (b.per_cpu[c][1] - a.per_cpu[c][1])
                    for c in b.per_cpu if c in a.per_cpu and b.per_cpu[c][1] > a.per_cpu[c][1]}, acct)


def run(cmd: list, acct: Accounting, timeout_s: float, sample_memory: bool = True) -> ToolRun:
    roots = [acct.server_root] if acct.server_root else []
    before = snapshot(roots, acct.known_pids)
    sampler = procstats.MemorySampler(acct.server_root).start() if (acct.server_root and sample_memory) else None
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        stderr += f"\n[harness] killed after {timeout_s:.0f} s"
    # communicate() reaped it, so its utime + stime is now in RUSAGE_CHILDREN: the harness reaps
    # nothing else while a tool runs (the stack and the backends keep running), so the delta is the tool's.
    wall = time.monotonic() - t0
    memory = sampler.stop() if sampler else None
    after = snapshot(roots, acct.known_pids)
    stats = between(before, after, acct, wall)
    if memory:
        stats["memory"] = memory
    return ToolRun(cmd, proc.returncode, stdout, stderr, wall, stats)


def account(wall, server_cpu, known_cpu: dict, generator_cpu, harness_cpu, busy_s, capacity_s,
            other_processes_cpu, steal_s, per_cpu_busy: dict, acct: Accounting) -> dict:
    known_total = server_cpu + sum(known_cpu.values()) + generator_cpu + harness_cpu
    unexplained = max(0.0, busy_s - steal_s - known_total)
    # Another process's count can include a child it reaped that had run before the window.
    other = min(other_processes_cpu, unexplained)
    foreign = other + steal_s
    loadgen_n = max(1, len(acct.loadgen_cpus))
    server_n = max(1, len(acct.server_cpus))
    return {
        "wall_s": round(wall, 3),
        "server_cpu_s": round(server_cpu, 3),
        "server_cpu_share": round(server_cpu / (wall * server_n), 3) if wall else None,
        "backend_cpu_s": {k: round(v, 3) for k, v in known_cpu.items()},
        "generator_cpu_s": round(generator_cpu, 3),
        "generator_cpu_share": round(generator_cpu / (wall * loadgen_n), 3) if wall else None,
        "harness_cpu_s": round(harness_cpu, 3),
        "harness_cpu_share": round(harness_cpu / capacity_s, 4) if capacity_s else None,
        "machine_busy_s": round(busy_s, 3),
        "machine_capacity_s": round(capacity_s, 3),
        "foreign_cpu_s": round(foreign, 3),
        "foreign_cpu_share": round(foreign / capacity_s, 3) if capacity_s else None,
        "other_processes_cpu_s": round(other, 3),
        "steal_s": round(steal_s, 3),
        "kernel_unattributed_cpu_s": round(unexplained - other, 3),
        "per_cpu_busy": {str(c): round(v, 3) for c, v in sorted(per_cpu_busy.items())},
    }


def flags(stats: dict, generator_max: float, foreign_max: float) -> list[str]:
    """Why a run's number may not be the server's: the words the reports print next to it."""
    out = []
    share = stats.get("generator_cpu_share")
    if share is not None and share > generator_max:
        out.append("generator-saturated")
    foreign = stats.get("foreign_cpu_share")
    if foreign is not None and foreign > foreign_max:
        out.append("disturbed")
    return out
