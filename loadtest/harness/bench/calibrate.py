"""Ceilings no stack can beat, measured in the same run at the same concurrency.

| endpoint | ceiling | why it bounds every stack |
|---|---|---|
| hello | nginx `return 200` (nginx_ceiling), same wrk, same CPUs | no HTTP server does less per request |
| sleep | Little's law: connections / 10 ms | each connection waits 10 ms per request at least |
| redis | redis-benchmark GET, random keys, same concurrency | a stack's Redis GET needs Redis to answer it |
| mysql | sysbench, the contract's prepared SELECT, random ids | a stack's SELECT needs MariaDB to answer it |
| memcache | memcslap (libmemcached-tools) get, same concurrency | a stack's get needs memcached to answer it |

The backend tools run on the server's CPUs (they stand where the stack stands: the backend's
client) while the backend keeps its own CPUs. Their clients are lighter than any HTTP stack, so
their rate bounds what a stack can get out of the backend. Substitutes, because Debian bookworm
has no memtier_benchmark: memcslap (threads, one blocking get at a time each) for memcached.
redis-benchmark's __rand_int__ pads keys to 12 digits, so its keys miss (a miss costs Redis the
same hash lookup as a hit, without copying ~60 bytes).
"""
import math
import re
import shutil

from harness.accounting import measure
from harness.config import settings

SLEEP_S = 0.010
PROBE_REQUESTS = 2000
MAX_REQUESTS = 20_000_000


def sleep_ceiling(connections: int) -> dict:
    return {"endpoint": "sleep", "connections": connections, "throughput_rps": round(connections / SLEEP_S, 1),
            "tool": "Little's law", "method": f"{connections} connections / 10 ms"}


def _redis_cmd(taskset, c, n):
    s = settings()
    return taskset + ["redis-benchmark", "-h", s["REDIS_HOST"], "-p", s["REDIS_PORT"], "-c", str(c), "-n", str(n),
                      "-r", "10000", "--threads", "1", "--csv", "GET", "greeting:__rand_int__"]


def parse_redis_benchmark(stdout: str) -> float:
    for line in stdout.splitlines():
        cells = [c.strip('"') for c in line.split('","')]
        if len(cells) >= 2 and cells[0].startswith("GET"):
            return float(cells[1])
    raise ValueError("redis-benchmark printed no GET line:\n" + stdout[-500:])


def _memcslap_cmd(taskset, c, n):
    s = settings()
    per_thread = max(1, math.ceil(n / c))
    return taskset + ["memcslap", "-s", f"{s['MEMCACHE_HOST']}:{s['MEMCACHE_PORT']}", "-t", "get",
                      "-c", str(c), "-e", str(per_thread)]


GET_LINE = re.compile(r"Time to get\s+(\d+) keys by\s+\d+ threads:\s+([\d.]+) seconds")


def parse_memcslap(stdout: str) -> float:
    m = GET_LINE.search(stdout)
    if not m:
        raise ValueError("memcslap printed no 'Time to get' line:\n" + stdout[-500:])
    keys, seconds = int(m.group(1)), float(m.group(2))
    return keys / seconds if seconds else 0.0


def _sysbench_cmd(taskset, c, seconds):
    import pathlib
    s = settings()
    script = pathlib.Path(__file__).with_name("sysbench_select.lua")
    return taskset + ["sysbench", str(script), "--db-driver=mysql", f"--mysql-host={s['MYSQL_HOST']}",
                      f"--mysql-port={s['MYSQL_PORT']}", f"--mysql-user={s['MYSQL_USER']}",
                      f"--mysql-password={s['MYSQL_PASSWORD']}", f"--mysql-db={s['MYSQL_DATABASE']}",
                      f"--threads={c}", f"--time={max(1, math.ceil(seconds))}", "--percentile=99", "run"]


SYSBENCH_QPS = re.compile(r"queries:\s+\d+\s+\(([\d.]+) per sec")


def parse_sysbench(stdout: str) -> float:
    m = SYSBENCH_QPS.search(stdout)
    if not m:
        raise ValueError("sysbench printed no queries-per-second line:\n" + stdout[-500:])
    return float(m.group(1))


TOOLS = {"redis": "redis-benchmark", "mysql": "sysbench", "memcache": "memcslap"}


def backend_ceiling(endpoint: str, connections: int, seconds: float, taskset: list, acct, raw_dir,
                   raw_name: str | None = None, expected_rps: float | None = None) -> dict:
    """Run the backend's own tool for about `seconds` at `connections`; its output goes to
    raw_dir/raw_name (default: ceiling-<endpoint>-c<connections>.txt).

    sysbench takes a duration. redis-benchmark and memcslap take a request count, and a short
    probe misjudges them (thread start-up dominates it), so the count grows run by run towards
    `seconds` and the first run lasting at least half of it is the measurement. `expected_rps` (a
    rate this tool reached before on this machine) sizes the first run to `seconds` directly."""
    tool = TOOLS[endpoint]
    if not shutil.which(tool):
        return {"endpoint": endpoint, "connections": connections, "throughput_rps": None, "tool": tool,
                "method": f"{tool} not installed (make setup installs it)"}
    if endpoint == "mysql":
        cmd = _sysbench_cmd(taskset, connections, seconds)
        parse = parse_sysbench
        run = measure.run(cmd, acct, seconds * 10 + 60, sample_memory=False)
    else:
        build, parse = (_redis_cmd, parse_redis_benchmark) if endpoint == "redis" else (_memcslap_cmd, parse_memcslap)
        n = max(PROBE_REQUESTS, connections * 4, min(MAX_REQUESTS, int((expected_rps or 0) * seconds)))
        while True:
            cmd = build(taskset, connections, n)
            run = measure.run(cmd, acct, seconds * 20 + 60, sample_memory=False)
            if run.wall_s >= seconds / 2 or run.returncode != 0 or n >= MAX_REQUESTS:
                break
            n = min(MAX_REQUESTS, int(n * min(8.0, max(2.0, seconds / max(run.wall_s, 0.05)))))
    name = raw_name or f"ceiling-{endpoint}-c{connections}.txt"
    (raw_dir / name).write_text(f"$ {' '.join(cmd)}\n# exit {run.returncode}, {run.wall_s:.2f} s\n{run.stdout}\n--- stderr ---\n{run.stderr}")
    try:
        rps = round(parse(run.stdout), 1)
        note = ""
    except ValueError as e:
        rps, note = None, str(e).splitlines()[0]
    return {"endpoint": endpoint, "connections": connections, "throughput_rps": rps, "tool": tool,
            "method": " ".join(cmd[3:] if cmd[0] == "taskset" else cmd), "raw": f"raw/{name}", "note": note,
            "stats": run.stats}
