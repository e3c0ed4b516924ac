#!/usr/bin/env python3
"""Measure one configuration of this stack with wrk, the way the README's Tuning table was made.

The server runs pinned to CPU 0 (`taskset -c 0`), wrk pinned to CPU 1 (`taskset -c 1 wrk -t1`),
same machine, same session. Each run records /proc/loadavg, because the box may be shared.

  python3 bench/bench.py --label vt --runs 2 --endpoints hello,sleep,redis,mysql,memcache -c 256
  python3 bench/bench.py --label platform --app-arg=--spring.threads.virtual.enabled=false ...

Environment: the variables of shared-schema/defaults.env (overridden by the caller's environment,
e.g. the private service ports) plus PORT; the stack must be built (make build STACK=java-tomcat).
"""
import argparse
import json
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import time
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent
STACK = HERE.parent
ROOT = STACK.parent
JDK = os.environ.get("JAVA_HOME") or sys.exit("bench.py: set JAVA_HOME to a JDK 21 or newer")
PATHS = {"hello": "/hello", "sleep": "/sleep", "redis": "/redis?id=42", "mysql": "/mysql?id=42",
         "memcache": "/memcache?id=42"}


def environment():
    env = {}
    for line in (ROOT / "shared-schema" / "defaults.env").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            k, _, v = line.partition("=")
            env[k] = v
    env.update({k: os.environ[k] for k in env if k in os.environ})
    env["PORT"] = os.environ.get("PORT", "18003")
    return {**os.environ, **env, "JAVA_HOME": JDK, "PATH": f"{JDK}/bin:" + os.environ["PATH"]}


def run_command():
    manifest = (STACK / "stack.toml").read_text()
    return re.search(r'^run = "(.*)"$', manifest, re.M).group(1).removeprefix("exec ")


def wait_ready(url, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(url + "/hello", timeout=1) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("server did not become ready")


def cpu_ticks(pid):
    """utime + stime of the whole server process, in clock ticks (1/100 s)."""
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])


def wrk(url, path, connections, seconds, pid=None):
    before = cpu_ticks(pid) if pid else 0
    cmd = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--latency", url + path]
    load = open("/proc/loadavg").read().split()[0]
    out = subprocess.run(cmd, capture_output=True, text=True).stdout
    ticks = (cpu_ticks(pid) - before) if pid else 0
    def grab(pattern, default="0"):
        m = re.search(pattern, out)
        return m.group(1) if m else default
    dist = out.partition("Latency Distribution")[2]
    def percentile(p):
        m = re.search(rf"^\s+{p}%\s+(\S+)", dist, re.M)
        return m.group(1) if m else "-"
    return {"path": path, "c": connections, "rps": float(grab(r"Requests/sec:\s+([\d.]+)")),
            "p50": percentile(50), "p99": percentile(99),
            "errors": sum(int(x) for x in re.findall(r"(?:connect|read|write|timeout) (\d+)", out)),
            "non2xx": int(grab(r"Non-2xx or 3xx responses: (\d+)")), "load1": float(load), "cmd": " ".join(cmd),
            "requests": int(grab(r"(\d+) requests in")), "server_cpu_s": ticks / os.sysconf("SC_CLK_TCK")}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", required=True)
    ap.add_argument("--jvm", default="", help="JVM options replacing the manifest's (e.g. '-XX:+UseG1GC -Xmx256m')")
    ap.add_argument("--app-arg", action="append", default=[], help="--spring.x=y overrides, repeatable")
    ap.add_argument("--endpoints", default="hello,sleep,redis,mysql,memcache")
    ap.add_argument("-c", "--connections", default="256")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--out", default=str(HERE / "results.jsonl"))
    a = ap.parse_args()
    env = environment()
    url = f"http://{env['HOST']}:{env['PORT']}"
    cmd = shlex.split(run_command())
    if a.jvm:
        cmd = [cmd[0], *shlex.split(a.jvm), *[x for x in cmd[1:] if not x.startswith("-X")]]
    cmd = ["taskset", "-c", "0", *cmd, *a.app_arg]
    server = subprocess.Popen(cmd, cwd=STACK, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    results = []
    try:
        wait_ready(url)
        endpoints = a.endpoints.split(",")
        for ep in endpoints:  # JIT warm-up, not recorded
            wrk(url, PATHS[ep], 64, a.warmup)
        for conns in a.connections.split(","):
            for run in range(a.runs):
                for ep in endpoints:
                    r = wrk(url, PATHS[ep], int(conns), a.seconds, server.pid)
                    r["cpu_us_per_req"] = round(1e6 * r["server_cpu_s"] / r["requests"], 1) if r["requests"] else None
                    r.update(label=a.label, run=run + 1, jvm=a.jvm, args=a.app_arg)
                    results.append(r)
                    print(f"{a.label:24} {ep:9} c={conns:5} run{run + 1} {r['rps']:10.0f} rps  p50 {r['p50']:>8}  "
                          f"p99 {r['p99']:>8}  sock-err {r['errors']}  non2xx {r['non2xx']}  cpu/req {r['cpu_us_per_req']} us  "
                          f"server-cpu {r['server_cpu_s']:.1f}s  load1 {r['load1']}",
                          flush=True)
        status = pathlib.Path(f"/proc/{server.pid}/status").read_text()
        if "VmHWM" not in status:
            raise SystemExit(f"{a.label}: the server exited during the sweep (out of heap?)")
        hwm = re.search(r"VmHWM:\s+(\d+) kB", status).group(1)
        rss = re.search(r"VmRSS:\s+(\d+) kB", status).group(1)
        print(f"{a.label:24} peak RSS (VmHWM) {int(hwm) // 1024} MiB, RSS now {int(rss) // 1024} MiB", flush=True)
        for r in results:
            r["peak_rss_mib"] = int(hwm) // 1024
    finally:
        with open(a.out, "a") as f:
            for r in results:
                f.write(json.dumps(r) + "\n")
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()


if __name__ == "__main__":
    sys.exit(main())
