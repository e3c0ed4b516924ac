"""One stack on this box, driven: backends up and pinned, the stack started pinned, primed, warmed up,
settled, and each closed- or open-loop load run with its accounting (used by bench, ab and soak)."""
import contextlib
import datetime
import fcntl
import os
import pathlib
import resource
import time

from harness import config, services, stacks
from harness.accounting import cpus, measure, procstats
from harness.bench import endpoint as endpoint_runner, machine, profiles
from harness.bench.settings import Settings
from harness.config import ROOT, RUN_DIR, SERVICES, external_services
from harness.contract.cases import DATA_ENDPOINTS
from harness.contract.http_client import fetch
from harness.loadgen import oha as loadgen_oha, wrk as loadgen_wrk

RESULTS_ROOT = pathlib.Path(os.environ.get("RESULTS_DIR") or ROOT / "results")
WARMUP_CONNECTIONS = 64
BEHIND_RATE = 0.9  # an open-loop run answering less than this share of the offered requests is flagged
NOFILE_WANTED = 1 << 20


def raise_nofile() -> dict:
    """Enough descriptors for 1024 connections on each side plus backend pools; children inherit it."""
    soft = config.raise_nofile(NOFILE_WANTED)
    return {"nofile_soft": soft, "nofile_hard": resource.getrlimit(resource.RLIMIT_NOFILE)[1],
            "somaxconn": machine.somaxconn()}


def new_run_dir(out_dir: pathlib.Path | None = None, prefix: str = "") -> pathlib.Path:
    """`out_dir`, or results/<prefix><UTC time>, with its raw/ made."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    run_dir = out_dir or RESULTS_ROOT / f"{prefix}{stamp}"
    (run_dir / "raw").mkdir(parents=True, exist_ok=True)
    return run_dir


class Box:
    """One stack on this box, as the whole run, `make ab` and `make soak` drive it: the backends up and
    pinned, the stack started pinned, primed, warmed up and settled, and each load run with its accounting."""

    def __init__(self, settings: Settings, layout: cpus.Layout, out_dir: pathlib.Path | None = None,
                 prefix: str = ""):
        self.s, self.layout = settings, layout
        self.dir = new_run_dir(out_dir, prefix)
        (self.dir / "scripts").mkdir(exist_ok=True)
        self.oha = loadgen_oha.binary()
        self.backend_pids: dict = {}

    # ------------------------------------------------------------------ helpers

    def acct(self, server_root: int | None) -> measure.Accounting:
        return measure.Accounting(server_root, dict(self.backend_pids), self.layout.server, self.layout.loadgen)

    def script(self, endpoint: str) -> pathlib.Path:
        path = self.dir / "scripts" / f"wrk-{endpoint}.lua"
        if not path.exists():
            path.write_text(loadgen_wrk.lua_script(endpoint))
        return path

    def keep_raw(self, name: str, run: measure.ToolRun) -> str:
        (self.dir / "raw" / name).write_text(
            f"$ {' '.join(run.cmd)}\n# exit {run.returncode}, {run.wall_s:.2f} s\n{run.stdout}\n--- stderr ---\n{run.stderr}")
        return f"raw/{name}"

    def closed_run(self, base_url: str, endpoint: str, connections: int, duration: float, server_root: int,
                   raw_name: str, script: pathlib.Path | None = None) -> dict:
        threads = loadgen_wrk.threads_for(connections, len(self.layout.loadgen))
        cmd = self.layout.taskset("loadgen") + loadgen_wrk.command(
            base_url + loadgen_wrk.endpoint_path(endpoint).split("?")[0], connections, duration,
            script or self.script(endpoint), threads, self.s.timeout_s)
        run = measure.run(cmd, self.acct(server_root), duration + 60)
        record = {"kind": "closed", "endpoint": endpoint, "connections": connections, "threads": threads,
                  "raw": self.keep_raw(raw_name, run), "stats": run.stats}
        try:
            record.update(loadgen_wrk.parse(run.stdout))
        except loadgen_wrk.WrkOutputError as e:
            record.update({"tool": "wrk", "throughput_rps": None, "requests": 0, "failure": str(e).splitlines()[0]})
        record["cpu_us_per_request"] = (round(run.stats["server_cpu_s"] / record["requests"] * 1e6, 1)
                                        if record.get("requests") else None)
        record["flags"] = measure.flags(run.stats, self.s.generator_max, self.s.foreign_max)
        if not record.get("requests"):
            record["flags"].append("no-answers")
        return record

    def profile_run(self, stack, profile: str, index: int, run, server_root: int) -> dict:
        """One run of a load profile: wrk with the run's shape, then the profile's own figures and flags."""
        script = self.dir / "scripts" / f"wrk-{profile}-{index}.lua"
        script.write_text(loadgen_wrk.lua_script(run.endpoint, shape=run.shape))
        record = self.closed_run(stack.url, run.endpoint, run.connections, self.s.profile_duration, server_root,
                                 f"{stack.name}-{profile}-{index}.txt", script)
        judged = profiles.judge(run, record)
        record["flags"] += judged.pop("flags")
        return {**record, **judged}

    def open_run(self, base_url: str, endpoint: str, rate: float, connections: int, server_root: int,
                 raw_name: str) -> dict:
        urls = loadgen_oha.urls_file(self.dir / "scripts" / f"oha-urls-{endpoint}.txt", base_url, endpoint)
        cmd = self.layout.taskset("loadgen") + loadgen_oha.command(
            self.oha, base_url, endpoint, rate, connections, self.s.open_duration, self.s.timeout_s, urls)
        run = measure.run(cmd, self.acct(server_root), self.s.open_duration + 60)
        record = {"kind": "open", "endpoint": endpoint, "connections": connections,
                  "raw": self.keep_raw(raw_name, run), "stats": run.stats}
        try:
            record.update(loadgen_oha.parse(run.stdout, rate, self.s.open_duration))
        except (loadgen_oha.OhaOutputError, KeyError) as e:
            record.update({"tool": "oha", "target_rate_rps": rate, "throughput_rps": None, "requests": 0,
                           "failure": str(e).splitlines()[0]})
        record["cpu_us_per_request"] = (round(run.stats["server_cpu_s"] / record["requests"] * 1e6, 1)
                                        if record.get("requests") else None)
        record["flags"] = measure.flags(run.stats, self.s.generator_max, self.s.foreign_max)
        if not record.get("requests") or not (record.get("latency_ms") or {}).get("p50"):
            record["flags"].append("no-answers")
        elif (record.get("achieved_fraction") or 0) < BEHIND_RATE:
            record["flags"].append("behind-rate")
        return record

    def start_pinned(self, stack, env: dict | None = None) -> stacks.Running:
        """The stack started (with `env` over its settings) on the server CPUs, its whole process
        tree pinned there; stop it with `with`. Raises stacks.StackError when it does not start."""
        with cpus.inherited(self.layout.server):
            running = stacks.start(stack, env=env)
        for pid in procstats.tree(running.pid):
            cpus.pin_process(pid, self.layout.server)
        return running

    # ------------------------------------------------------------------ phases

    def setup_services(self) -> list[str]:
        started = services.up()
        self.pin_backends()
        return started

    def pin_backends(self) -> None:
        """(Re)read the backends' pids and pin them: verification's outage checks restart them."""
        self.backend_pids = {}
        for name in SERVICES:
            if name in external_services():
                continue
            pid = services.pid(name)
            if pid:
                self.backend_pids[name] = pid
                cpus.pin_process(pid, self.layout.backends)

    def prime(self, stack) -> list[str]:
        """One request per endpoint before any load: a stack that cannot answer is caught here, not by wrk."""
        problems = []
        for endpoint in self.s.endpoints:
            target = loadgen_wrk.endpoint_path(endpoint) + ("1" if endpoint in DATA_ENDPOINTS else "")
            try:
                resp = fetch(stack.host, stack.port, "GET", target, 5.0)
                if resp.status != 200:
                    problems.append(f"GET {target}: {resp.status}")
            except Exception as e:  # noqa: BLE001 - any failure is a reason, reported as such
                problems.append(f"GET {target}: {e}")
        return problems

    def warm_up(self, stack, root: int, raw_prefix: str | None = None) -> dict:
        """Until the per-endpoint rate stops drifting (last 3 one-second runs within ±warmup_drift of
        their mean) after warmup_min, or warmup_max: JIT compilers and pools settle before measuring.
        `raw_prefix` (default: the stack's name) keeps the raw outputs of several starts apart."""
        t0 = time.monotonic()
        rates: dict[str, list] = {e: [] for e in self.s.endpoints}
        rounds = 0
        while True:
            for endpoint in self.s.endpoints:
                rec = self.closed_run(stack.url, endpoint, WARMUP_CONNECTIONS, 1, root,
                                      f"{raw_prefix or stack.name}-warmup-{endpoint}-{rounds}.txt")
                rates[endpoint].append(rec.get("throughput_rps") or 0.0)
            rounds += 1
            elapsed = time.monotonic() - t0

            def steady(xs):
                if len(xs) < 3:
                    return False
                last = xs[-3:]
                mean = sum(last) / 3
                return mean > 0 and all(abs(x - mean) <= self.s.warmup_drift * mean for x in last)
            stable = all(steady(xs) for xs in rates.values())
            if (stable and elapsed >= self.s.warmup_min) or elapsed >= self.s.warmup_max:
                return {"seconds": round(elapsed, 1), "rounds": rounds, "stable": stable,
                        "rates_rps": rates, "connections": WARMUP_CONNECTIONS}

    def settle(self, stack) -> float:
        return endpoint_runner.settle(stack.host, stack.port)

@contextlib.contextmanager
def exclusive():
    """One benchmark at a time per RUN_DIR: two would share the backends, load each other's
    numbers and break the verifier's read counts."""
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    with open(RUN_DIR / "bench.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SystemExit(f"another benchmark is running with RUN_DIR={RUN_DIR} (it holds {lock.name}); "
                             "wait for it, or give this one its own RUN_DIR and service ports") from None
        yield


