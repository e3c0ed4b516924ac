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
from dataclasses import dataclass, field

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


def _cpu_of(pids: dict) -> dict:
    return {name: procstats.cpu_seconds(pid) for name, pid in pids.items() if pid}


def _server_and_others(acct: Accounting) -> tuple[float, dict]:
    """The server tree's CPU seconds, and every other process's (procstats.other_processes_cpu),
    from one read of /proc."""
    procs = procstats.processes()
    server = procstats.tree(acct.server_root, procs) if acct.server_root else []
    known = {os.getpid()} | {p for p in acct.known_pids.values() if p} | set(server)
    return procstats.tree_cpu_seconds(server, procs), procstats.other_processes_cpu(known, procs)


def run(cmd: list, acct: Accounting, timeout_s: float, sample_memory: bool = True) -> ToolRun:
    server_before, others_before = _server_and_others(acct)
    known_before = _cpu_of(acct.known_pids)
    self_before = resource.getrusage(resource.RUSAGE_SELF)
    busy0, steal0, total0, per0 = procstats.machine_cpu_seconds()
    sampler = procstats.MemorySampler(acct.server_root).start() if (acct.server_root and sample_memory) else None
    children_before = _children_cpu()
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
    generator_cpu = max(0.0, _children_cpu() - children_before)
    wall = time.monotonic() - t0
    memory = sampler.stop() if sampler else None
    busy1, steal1, total1, per1 = procstats.machine_cpu_seconds()
    self_after = resource.getrusage(resource.RUSAGE_SELF)
    known_after = _cpu_of(acct.known_pids)
    server_after, others_after = _server_and_others(acct)
    others = procstats.cpu_delta(others_before, others_after)
    stats = account(wall, server_after - server_before,
                    {k: known_after.get(k, 0) - known_before.get(k, 0) for k in known_before},
                    generator_cpu,
                    (self_after.ru_utime + self_after.ru_stime) - (self_before.ru_utime + self_before.ru_stime),
                    busy1 - busy0, total1 - total0, others, steal1 - steal0,
                    {c: (per1[c][0] - per0[c][0]) / (per1[c][1] - per0[c][1]) for c in per1
                     if c in per0 and per1[c][1] > per0[c][1]},
                    acct)
    if memory:
        stats["memory"] = memory
    return ToolRun(cmd, proc.returncode, stdout, stderr, wall, stats)


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


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
