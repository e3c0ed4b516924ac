"""`make soak`: one stack, one endpoint, a fixed arrival rate for a long time (an hour by default),
recorded in windows of a few seconds: what a 10-second benchmark cannot see (a heap that fills
after 17 minutes, a leak, full GCs of many seconds).

The stack starts as in the benchmark (pinned, golden cases first, warmed up), with its runtime's
GC log switched on (gclog). Then one oha run per window, each started on the window's boundary
whatever the previous one is still waiting for, at the same rate with --latency-correction: the
arrivals stay open-loop and every window has its own coordinated-omission-corrected percentiles
(one long oha run keeps every request's record in memory until it ends and prints no series; see
README, "make soak"). At every boundary the server tree's CPU and memory are read (procstats).
After the last window, the GC pauses are read from the runtime's log and placed in the windows,
and the verdicts (soak_verdicts) are drawn: leak, stall, behind, errors, longest GC pause.

Output: results/soak-<UTC time>/results.json (the series and the verdicts), report.html (one page,
offline), report.md, raw/ (every window's oha JSON, the GC logs, the stack's log).
"""
import datetime
import json
import os
import pathlib
import resource
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field

from harness import ab, services, stacks
from harness.accounting import cpus, gclog, measure, procstats, stats
from harness.bench import calibrate, machine, plan, run
from harness.bench.settings import Settings, with_port_offset
from harness.config import LOG_DIR
from harness.contract.cases import ENDPOINTS
from harness.loadgen import oha as loadgen_oha
from harness.reports import report_md
from harness.soak import verdicts as soak_verdicts

SCHEMA = "reference-servers/soak"
SCHEMA_VERSION = 1
DEFAULT_CONNECTIONS = 64      # when no benchmark says where the stack's knee is
PEAK_PROBE_S = 10.0           # the closed-loop run that measures the peak when no results.json has it
OHA_GRACE_S = 30.0            # beyond the window and the request timeout, before a window's oha is killed


# The thresholds a make variable sets: field, variable, lowest value.
THRESHOLD_KNOBS = (("leak_mib_per_h", "LEAK_MIB_PER_H", 0.0), ("leak_min_mib", "LEAK_MIN_MIB", 0.0),
                   ("stall_factor", "STALL_FACTOR", 1.0), ("stall_floor_ms", "STALL_FLOOR_MS", 0.0),
                   ("release_fraction", "RELEASE_FRACTION", 0.0))


def too_few_connections(endpoint: str, rate: float, connections: int) -> str | None:
    """Why `connections` cannot carry `rate` (None: they can). Every /sleep request holds its connection
    for at least the contract's 10 ms, so by Little's law n connections carry at most n / 10 ms req/s;
    below that the soak only measures its own queue (oha's wait for a free connection)."""
    if endpoint != "sleep" or connections / calibrate.SLEEP_S > rate:
        return None
    return (f"{connections} connections cannot carry {rate:,.0f} req/s on /sleep: each request holds its connection "
            f"for at least {calibrate.SLEEP_S * 1000:g} ms, so they carry at most {connections / calibrate.SLEEP_S:,.0f} "
            f"req/s (Little's law); give CONNECTIONS={enough_connections(rate)} or more, or a lower RATE")


def enough_connections(rate: float) -> int:
    """For /sleep: the power of two that keeps at most half the connections waiting out the 10 ms."""
    need = 2 * rate * calibrate.SLEEP_S
    n = 1
    while n < need:
        n *= 2
    return n


def thresholds_from(env, base: soak_verdicts.Thresholds) -> soak_verdicts.Thresholds:
    """`base` with every threshold `env` sets (LEAK_MIB_PER_H=...) over it; ab.Usage on a bad value."""
    th = soak_verdicts.Thresholds(**base.as_dict())
    for key, name, low in THRESHOLD_KNOBS:
        setattr(th, key, ab.number(env, name, float, getattr(th, key), low))
    return th


@dataclass
class SoakSettings:
    stack: str
    endpoint: str
    env: dict = field(default_factory=dict)  # STACK_ENV: over the stack's defaults
    rate: float | None = None     # req/s; None: rate_fraction x the measured peak
    rate_fraction: float = 0.5
    duration: float = 3600.0      # seconds of load
    window: int = 5               # seconds per window (one oha run each)
    connections: int | None = None  # None: the knee of the benchmark the peak came from, else 64
    warmup_max: float = Settings.warmup_max
    warmup_min: float = Settings.warmup_min
    timeout_s: int = Settings.timeout_s
    foreign_max: float = Settings.foreign_max
    progress_s: float = 60.0      # one progress line per this many seconds
    build: bool = True
    thresholds: soak_verdicts.Thresholds = field(default_factory=soak_verdicts.Thresholds)

    @classmethod
    def from_env(cls, env=None) -> "SoakSettings":
        env = os.environ if env is None else env
        stack = (env.get("STACK") or "").strip()
        endpoint = (env.get("ENDPOINT") or "").strip().lstrip("/")
        if not stack or "," in stack:
            raise ab.Usage("STACK=<one stack> is required (see make list)")
        if endpoint not in ENDPOINTS:
            raise ab.Usage(f"ENDPOINT={endpoint!r}: one of {', '.join(ENDPOINTS)}")
        s = cls(stack, endpoint, ab.parse_env(env.get("STACK_ENV", ""), "STACK_ENV"))
        s.rate = ab.number(env, "RATE", float, None, 1.0)
        s.rate_fraction = ab.number(env, "RATE_FRACTION", float, s.rate_fraction, 0.01)
        s.window = ab.number(env, "WINDOW", int, s.window, 1)
        s.duration = ab.number(env, "DURATION", float, s.duration, 3.0 * s.window)
        s.connections = ab.number(env, "CONNECTIONS", int, None, 1)
        s.warmup_max = ab.number(env, "WARMUP_MAX", float, s.warmup_max, 0.0)
        s.warmup_min = min(s.warmup_min, s.warmup_max)
        s.timeout_s = ab.number(env, "TIMEOUT", int, s.timeout_s, 1)
        s.foreign_max = ab.number(env, "FOREIGN_MAX", float, s.foreign_max, 0.0)
        s.progress_s = ab.number(env, "PROGRESS", float, s.progress_s, 1.0)
        s.build = (env.get("BUILD") or "").strip() not in ("0", "no", "false")
        s.thresholds = thresholds_from(env, s.thresholds)
        if s.rate_fraction > 1:
            raise ab.Usage(f"RATE_FRACTION={s.rate_fraction:g}: a fraction of the peak, at most 1")
        if s.rate and s.connections and too_few_connections(endpoint, s.rate, s.connections):
            raise ab.Usage(too_few_connections(endpoint, s.rate, s.connections))
        return s

    @property
    def windows(self) -> int:
        return max(3, round(self.duration / self.window))

    def bench_settings(self) -> Settings:
        return Settings(concurrency=[DEFAULT_CONNECTIONS], duration=PEAK_PROBE_S, repeats=1, open_rates=[],
                        open_duration=float(self.window), warmup_min=self.warmup_min, warmup_max=self.warmup_max,
                        endpoints=[self.endpoint], stacks=self.stack, calibrate=False, foreign_max=self.foreign_max,
                        timeout_s=self.timeout_s)

    def as_dict(self) -> dict:
        out = asdict(self)
        out.pop("stack"), out.pop("endpoint"), out.pop("env")
        return out

    def command(self, rate: float, layout: cpus.Layout) -> str:
        """The make command that repeats this soak at the rate it ran (the CPU layout too, when set)."""
        words = ["make", "soak", f"STACK={self.stack}", f"ENDPOINT={self.endpoint}", f"RATE={rate:g}",
                 f"DURATION={self.duration:g}", f"WINDOW={self.window}"]
        if self.env:
            words.append("STACK_ENV=" + shlex.quote(ab.env_text(self.env)))
        if self.connections:
            words.append(f"CONNECTIONS={self.connections}")
        if self.warmup_max != Settings.warmup_max:
            words.append(f"WARMUP_MAX={self.warmup_max:g}")
        defaults = soak_verdicts.Thresholds()
        for key, name, _ in THRESHOLD_KNOBS:
            if getattr(self.thresholds, key) != getattr(defaults, key):
                words.append(f"{name}={getattr(self.thresholds, key):g}")
        if layout.source.startswith("environment"):
            words += [f"CPUS_SERVER={cpus.format_list(layout.server)}", f"CPUS_LOADGEN={cpus.format_list(layout.loadgen)}",
                      f"CPUS_BACKENDS={cpus.format_list(layout.backends)}"]
        return " ".join(words)


# ---------------------------------------------------------------- the rate

def peak_from_results(root: pathlib.Path, stack: str, endpoint: str, here: dict) -> dict | None:
    """The newest results.json under `root` that benchmarked `stack` on `endpoint` on this machine
    (same CPU model and count): its headline req/s and knee. Other machines' peaks say nothing here."""
    found = []
    for path in root.glob("*/results.json"):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if doc.get("schema") != "reference-servers/bench-results":
            continue
        m = doc.get("machine") or {}
        if (m.get("cpu_model"), m.get("cpus")) != (here.get("cpu_model"), here.get("cpus")):
            continue
        for s in doc.get("stacks") or []:
            ep = (s.get("endpoints") or {}).get(endpoint) if s.get("name") == stack else None
            peak = (((ep or {}).get("headline") or {}).get("throughput_rps") or {}).get("median")
            if peak:
                found.append({"peak_rps": peak, "knee_connections": ep.get("knee_connections"),
                              "headline_connections": ep["headline"].get("connections"),
                              "source": str(path), "started": doc.get("started"),
                              "flags": ep["headline"].get("flags") or []})
    return max(found, key=lambda f: f["started"] or "", default=None)


# ---------------------------------------------------------------- one boundary's readings

@dataclass
class Reading:
    """Everything read at one window boundary; two consecutive readings make a window's accounting."""
    mono: float
    server_cpu: float
    known_cpu: dict
    others: dict
    busy: float
    steal: float
    total: float
    per_cpu: dict
    harness_cpu: float
    children_cpu: float
    rss: int
    pss: int
    processes: int
    started: dict  # pid -> start time (epoch) of the server tree's processes


def read_boundary(root: int, backend_pids: dict) -> Reading:
    procs = procstats.processes()
    tree = procstats.tree(root, procs)
    known = {os.getpid()} | {p for p in backend_pids.values() if p} | set(tree)
    rss = pss = 0
    for pid in tree:
        r, p = procstats.memory_bytes(pid)
        rss, pss = rss + r, pss + p
    busy, steal, total, per = procstats.machine_cpu_seconds()
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Reading(time.monotonic(), procstats.tree_cpu_seconds(tree, procs),
                   {n: procstats.cpu_seconds(p) for n, p in backend_pids.items() if p},
                   procstats.other_processes_cpu(known, procs), busy, steal, total, per,
                   me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime, rss, pss, len(tree),
                   {pid: procs[pid].started for pid in tree if pid in procs})


def accounting(a: Reading, b: Reading, acct: measure.Accounting, foreign_max: float) -> dict:
    """The server's CPU and memory over one window, and who else used the machine (measure.account)."""
    wall = b.mono - a.mono
    s = measure.account(wall, b.server_cpu - a.server_cpu,
                        {k: b.known_cpu.get(k, 0) - v for k, v in a.known_cpu.items()},
                        max(0.0, b.children_cpu - a.children_cpu), b.harness_cpu - a.harness_cpu,
                        b.busy - a.busy, b.total - a.total, procstats.cpu_delta(a.others, b.others), b.steal - a.steal,
                        {c: (b.per_cpu[c][0] - a.per_cpu[c][0]) / (b.per_cpu[c][1] - a.per_cpu[c][1])
                         for c in b.per_cpu if c in a.per_cpu and b.per_cpu[c][1] > a.per_cpu[c][1]}, acct)
    return {"server_cpu_s": s["server_cpu_s"], "server_cpu_share": s["server_cpu_share"],
            "rss_bytes": b.rss, "pss_bytes": b.pss, "processes": b.processes, "steal_s": s["steal_s"],
            "foreign_cpu_share": s["foreign_cpu_share"], "generator_cpu_s": s["generator_cpu_s"],
            "generator_cpu_share": s["generator_cpu_share"], "harness_cpu_s": s["harness_cpu_s"],
            "generator_saturated": bool(s["generator_cpu_share"] is not None and s["generator_cpu_share"] > Settings.generator_max),
            "disturbed": bool(s["foreign_cpu_share"] is not None and s["foreign_cpu_share"] > foreign_max)}


# ---------------------------------------------------------------- one window's load

@dataclass
class WindowRun:
    i: int
    proc: subprocess.Popen
    started_wall: float
    started_mono: float
    out: pathlib.Path


def window_record(i: int, cfg: SoakSettings, rate: int, wall: float, raw: str, stdout: str, returncode: int | None) -> dict:
    """One window from its oha JSON: answered/offered, errors, corrected percentiles."""
    rec = {"i": i, "t_s": i * cfg.window, "seconds": cfg.window, "started": round(wall, 3), "rate": rate,
           "offered": rate * cfg.window, "raw": raw}
    try:
        r = loadgen_oha.parse(stdout, rate, cfg.window)
    except (loadgen_oha.OhaOutputError, KeyError) as e:
        rec.update(answered=0, errors={"other": 0}, p50_ms=None, p90_ms=None, p99_ms=None, p999_ms=None,
                   max_ms=None, mean_ms=None, failure=f"oha exit {returncode}: {str(e).splitlines()[0]}")
        return rec
    socket_errors = sum(v for k, v in r["errors"].items() if k != "non_2xx")
    lat = r["latency_ms"]
    rec.update(answered=r["requests"] - socket_errors, errors=r["errors"], p50_ms=lat["p50"], p90_ms=lat["p90"],
               p99_ms=lat["p99"], p999_ms=lat["p99.9"], max_ms=lat["max"], mean_ms=lat["mean"])
    return rec


class Soak:
    def __init__(self, cfg: SoakSettings, stack: stacks.Stack, layout: cpus.Layout, out_dir: pathlib.Path | None = None,
                 out=print):
        self.cfg, self.stack, self.layout, self.say = cfg, stack, layout, out
        self.bench = run.Bench(cfg.bench_settings(), layout, out_dir, prefix="soak-")
        self.dir = self.bench.dir
        (self.dir / "raw" / "windows").mkdir(parents=True, exist_ok=True)
        self.gc_dir = self.dir / "raw" / "gc"
        self.gc_dir.mkdir(exist_ok=True)
        self.gc_kind = gclog.runtime(stack)
        self.doc: dict = {}
        self.pending: dict[int, WindowRun] = {}
        self.running: stacks.Running | None = None

    def save(self) -> None:
        write(self.doc, self.dir)

    def run(self) -> pathlib.Path:
        with run.exclusive():
            return self._run()

    def _run(self) -> pathlib.Path:
        cfg, stack = self.cfg, self.stack
        limits = run.raise_nofile()
        started_at = datetime.datetime.now(datetime.timezone.utc)
        self.doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "started": started_at.isoformat(timespec="seconds"),
                    "finished": None, "complete": False, "interrupted": False, "refused": None, "command": None,
                    "stack": {"name": stack.name, "language": stack.language, "framework": stack.framework,
                              "port": stack.port},
                    "endpoint": cfg.endpoint, "env": cfg.env, "env_text": ab.env_text(cfg.env),
                    "settings": cfg.as_dict(), "plan": None, "git": machine.git(), "machine": machine.describe(),
                    "loadavg_start": machine.loadavg(), "cpu_layout": self.layout.as_dict(), "limits": limits,
                    "tools": machine.tool_versions(self.bench.oha), "versions": machine.stack_versions(stack),
                    "gc": {"runtime": self.gc_kind, "log": None, "available": False,
                           "why_not": gclog.NO_GC_LOG.get(self.gc_kind), "pauses": []},
                    "proof": None, "warmup": None, "peak_probe": None, "soak_started": None,
                    "lead_in": None, "windows": [], "processes": {}, "verdicts": None}
        self.save()
        started = self.bench.setup_services()
        try:
            if cfg.build:
                self.say(f"soak: building {stack.name} ...", flush=True)
                try:
                    stacks.build(stack)
                except stacks.StackError as e:
                    raise ab.Refused(str(e)) from None
                self.doc["versions"] = machine.stack_versions(stack)
            self._start_and_soak()
        except ab.Refused as e:
            self.doc["refused"] = str(e)
        except KeyboardInterrupt:
            self.doc["interrupted"] = True
            raise
        finally:
            self._stop_windows()
            if self.running is not None:
                self.running.stop()
                self._keep_stack_log()
            services.down(started)
            finished = datetime.datetime.now(datetime.timezone.utc)
            self.doc.update(finished=finished.isoformat(timespec="seconds"),
                            duration_s=round((finished - started_at).total_seconds(), 1), loadavg_end=machine.loadavg())
            self.conclude()
            self.save()
            render(self.dir)
        return self.dir

    # ------------------------------------------------------------ phases

    def _start_and_soak(self) -> None:
        cfg, stack, bench = self.cfg, self.stack, self.bench
        try:
            gc_env = gclog.environment(self.gc_kind, self.gc_dir, {**os.environ, **cfg.env})
        except gclog.GcLogError as e:
            raise ab.Refused(str(e)) from None
        env = {**cfg.env, **gc_env}
        if self.gc_kind in ("jvm", "node"):
            self.doc["gc"].update(log="raw/gc/gc-<pid>.log (JVM unified logging: -Xlog:" + gclog.JVM_TAGS + ")"
                                  if self.gc_kind == "jvm" else
                                  "raw/stack-run.log (V8 --trace-gc, switched on by NODE_OPTIONS=--require "
                                  "harness/bench/node_trace_gc.cjs)", env=gc_env)
        try:
            self.running = bench.start_pinned(stack, env)
        except stacks.StackError as e:
            raise ab.Refused(f"{stack.name} did not start: {e}") from None
        said = f"{stack.name} ({ab.env_text(cfg.env) or 'the defaults'})"
        self.doc["proof"] = ab.prove(stack, cfg.endpoint, ab.golden_cases(cfg.endpoint), said)
        root = self.running.pid
        if cfg.warmup_max > 0:
            self.say(f"soak: warming up (at most {cfg.warmup_max:g} s) ...", flush=True)
            self.doc["warmup"] = bench.warm_up(stack, root)
        rate, connections = self.decide_rate(root)
        n = cfg.windows
        self.doc["command"] = cfg.command(rate, self.layout)
        self.doc["plan"].update(rate_rps=rate, connections=connections, windows=n, window_s=cfg.window,
                                duration_s=n * cfg.window)
        self.save()
        eta = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=(n + 1) * cfg.window + 5)
        self.say(f"soak: {stack.name} /{cfg.endpoint} at {rate:,} req/s ({self.doc['plan']['rate_source']}), "
                 f"{connections} connections, {plan.fmt(n * cfg.window)} in {n} windows of {cfg.window} s after a "
                 f"lead-in window; "
                 f"GC: {self.doc['gc']['log'] or self.doc['gc']['why_not']}", flush=True)
        self.say(f"soak: CPUs server={self.layout.as_dict()['server']} loadgen={self.layout.as_dict()['loadgen']}; "
                 f"ends about {eta.strftime('%H:%M:%S')} UTC; results in {self.dir}", flush=True)
        bench.settle(stack)
        self.soak(rate, connections, n)

    def decide_rate(self, root: int) -> tuple[int, int]:
        cfg = self.cfg
        found = peak_from_results(run.RESULTS_ROOT, self.stack.name, cfg.endpoint, self.doc["machine"])
        plan_ = {"rate_fraction": None, "peak_rps": None, "peak_source": None, "connections_source": None}
        if cfg.rate:
            rate, plan_["rate_source"] = cfg.rate, "RATE"
        elif found:
            rate = cfg.rate_fraction * found["peak_rps"]
            plan_.update(rate_fraction=cfg.rate_fraction, peak_rps=found["peak_rps"], peak_source=found,
                         rate_source=f"{cfg.rate_fraction:g} x {report_md.fmt_rps(found['peak_rps'])} req/s, the headline "
                                     f"of {found['source']} ({found['started']})")
        else:
            self.say(f"soak: no results.json under {run.RESULTS_ROOT} has {self.stack.name} /{cfg.endpoint} on this "
                     f"machine: measuring its closed-loop peak first ({PEAK_PROBE_S:g} s at {DEFAULT_CONNECTIONS} "
                     "connections) ...", flush=True)
            self.bench.settle(self.stack)
            probe = self.bench.closed_run(self.stack.url, cfg.endpoint, DEFAULT_CONNECTIONS, PEAK_PROBE_S, root,
                                          "peak-probe.txt")
            self.doc["peak_probe"] = probe
            peak = probe.get("throughput_rps")
            if not peak:
                raise ab.Refused(f"the peak probe got no answers from {self.stack.name} /{cfg.endpoint}: "
                                 f"{probe.get('failure') or probe['raw']}; give RATE=")
            rate = cfg.rate_fraction * peak
            plan_.update(rate_fraction=cfg.rate_fraction, peak_rps=peak,
                         rate_source=f"{cfg.rate_fraction:g} x {report_md.fmt_rps(peak)} req/s, a {PEAK_PROBE_S:g} s "
                                     f"closed-loop run at {DEFAULT_CONNECTIONS} connections just before"
                                     + (f" [{' '.join(probe['flags'])}]" if probe["flags"] else ""))
        if cfg.connections:
            connections, plan_["connections_source"] = cfg.connections, "CONNECTIONS"
        elif found and cfg.rate is None and found.get("knee_connections"):
            # The knee sustained ~90% of the peak in closed loop, so it carries a fixed rate below it;
            # the peak's level (often 1024) would mostly measure connection set-up in every window.
            connections, plan_["connections_source"] = found["knee_connections"], "the knee of that benchmark"
        else:
            connections, plan_["connections_source"] = DEFAULT_CONNECTIONS, "the default"
        short = too_few_connections(cfg.endpoint, rate, connections)
        if short and cfg.connections:
            raise ab.Refused(short)
        if short:
            connections = enough_connections(rate)
            plan_["connections_source"] += (f", raised to {connections}: at least {calibrate.SLEEP_S * 1000:g} ms per "
                                            f"request, at most half of them waiting at this rate (Little's law)")
        self.doc["plan"] = plan_
        return max(1, int(rate)), connections

    # ------------------------------------------------------------ the windows

    def soak(self, rate: int, connections: int, n: int) -> None:
        cfg, bench, stack = self.cfg, self.bench, self.stack
        urls = loadgen_oha.urls_file(self.dir / "scripts" / f"oha-urls-{cfg.endpoint}.txt", stack.url, cfg.endpoint)
        cmd = self.layout.taskset("loadgen") + loadgen_oha.command(bench.oha, stack.url, cfg.endpoint, rate, connections,
                                                                   cfg.window, cfg.timeout_s, urls)
        self.doc["plan"]["oha_command"] = " ".join(cmd)
        acct = bench.acct(self.running.pid)
        readings: dict[int, Reading] = {}
        done: dict[int, dict] = {}
        loads: dict[int, dict] = {}
        # The lead-in (k = -1): one window of the soak's own load, launched like the others, whose
        # end is the first judged window's start. It takes the start of the load (oha's first
        # process and connections, the server's first requests from this client, which the wrk
        # warm-up did not send), so that window 0 starts like every later one: with the previous
        # window's oha finishing. Recorded and reported, not judged (soak_verdicts.lead_in_verdict).
        lead = time.monotonic()
        t0 = lead + cfg.window
        self.doc["soak_started"] = time.time() + cfg.window
        ticker = Ticker(self, t0, n)
        for k in range(-1, n + 1):
            _sleep_until(t0 + k * cfg.window)
            if k < n:
                self.launch(k, cmd)
            readings[k] = read_boundary(self.running.pid, bench.backend_pids)
            self.doc["processes"].update({str(p): s for p, s in readings[k].started.items()})
            if k - 1 in readings:
                done[k - 1] = accounting(readings.pop(k - 1), readings[k], acct, cfg.foreign_max)
            self.collect(loads, rate, block=(k == n))
            if -1 in loads and -1 in done:
                self.doc["lead_in"] = {**loads.pop(-1), **done.pop(-1)}
                ticker.lead_in(self.doc["lead_in"])
            # In order: a window whose oha still waits for requests a stall holds ends after the next one.
            while len(self.doc["windows"]) in done and len(self.doc["windows"]) in loads:
                i = len(self.doc["windows"])
                rec = {**loads.pop(i), **done.pop(i)}
                self.doc["windows"].append(rec)
                ticker.window(rec)
            self.save()
            if not self.running.alive():
                self.doc["exited"] = (f"{stack.name} exited (code {self.running.proc.returncode}) after "
                                      f"{plan.fmt(max(0.0, time.monotonic() - t0))} of the soak; see raw/stack-run.log")
                self.say(f"soak: ⚑ {self.doc['exited']}", flush=True)
                return
            ticker.maybe_progress()

    def launch(self, k: int, cmd: list[str]) -> None:
        out = self.dir / "raw" / "windows" / ("lead-in.json" if k < 0 else f"w{k:05d}.json")
        with open(out, "w") as stdout, open(out.with_suffix(".err"), "w") as stderr:
            # Its own session: a Ctrl-C on the terminal reaches the harness, which stops it, not oha
            # (which would print a partial window and exit).
            proc = subprocess.Popen(cmd, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, start_new_session=True)
        self.pending[k] = WindowRun(k, proc, time.time(), time.monotonic(), out)

    def collect(self, loads: dict, rate: int, block: bool) -> None:
        """Parse every finished window's oha output; `block`: wait for the ones still running."""
        limit = self.cfg.window + self.cfg.timeout_s + OHA_GRACE_S
        for k, w in sorted(self.pending.items()):
            if block:
                try:
                    w.proc.wait(max(0.0, limit - (time.monotonic() - w.started_mono)))
                except subprocess.TimeoutExpired:
                    pass
            if w.proc.poll() is None and time.monotonic() - w.started_mono > limit:
                w.proc.kill()
                w.proc.wait()
            if w.proc.poll() is None:
                continue
            del self.pending[k]
            err = w.out.with_suffix(".err")
            if err.exists() and not err.read_text().strip():
                err.unlink()
            loads[k] = window_record(k, self.cfg, rate, w.started_wall, f"raw/windows/{w.out.name}",
                                     w.out.read_text(errors="replace"), w.proc.returncode)

    def _stop_windows(self) -> None:
        for w in self.pending.values():
            if w.proc.poll() is None:
                w.proc.kill()
            w.proc.wait()
        self.pending.clear()

    def _keep_stack_log(self) -> None:
        log = LOG_DIR / f"{self.stack.name}-run.log"
        if log.exists():
            shutil.copyfile(log, self.dir / "raw" / "stack-run.log")

    # ------------------------------------------------------------ the verdicts

    def conclude(self) -> None:
        conclude(self.doc, self.dir, self.cfg.thresholds)


def gc_logs_kept(doc: dict, out_dir: pathlib.Path) -> bool:
    """Whether out_dir still holds the runtime's GC log (a results.json copied alone does not)."""
    if doc["gc"]["runtime"] == "jvm":
        return any((out_dir / "raw" / "gc").glob("gc-*.log"))
    return doc["gc"]["runtime"] == "node" and (out_dir / "raw" / "stack-run.log").exists()


def conclude(doc: dict, out_dir: pathlib.Path, th: soak_verdicts.Thresholds, read_gc: bool = True) -> None:
    """GC pauses read from the logs and placed in the windows; the verdicts; the flags of each window.
    `read_gc` False keeps the pauses already in doc (re-judging a soak whose logs are gone)."""
    gc = doc["gc"]
    started = {int(p): s for p, s in doc.get("processes", {}).items()}
    if gc["runtime"] in ("jvm", "node") and doc.get("soak_started") and read_gc:
        pauses, gc["unreadable_lines"] = gclog.read(gc["runtime"], out_dir / "raw" / "gc", out_dir / "raw" / "stack-run.log",
                                                    started)
        gc["available"] = bool(pauses) or gc["runtime"] == "jvm" and any((out_dir / "raw" / "gc").glob("gc-*.log"))
        gc["why_not"] = None if gc["available"] else "the runtime's GC log holds no line (did the stack start its runtime?)"
        t0 = doc["soak_started"]
        end = t0 + sum(w["seconds"] for w in doc["windows"])
        # Pauses during the warm-up are left out: the soak's verdicts are about the soak.
        gc["pauses"] = [[None if p.t is None else round(p.t - t0, 3), p.ms, p.kind, p.pid]
                        for p in pauses if p.t is None or t0 <= p.t < end]
        gc["before_soak"] = sum(1 for p in pauses if p.t is not None and p.t < t0)
        lead = doc.get("lead_in")
        if lead:
            during = [p.ms for p in pauses if p.t is not None and t0 + lead["t_s"] <= p.t < t0]
            lead.update(gc_pauses=len(during) if gc["available"] else None,
                        gc_longest_ms=max(during, default=0.0) if gc["available"] else None)
    elif not doc.get("soak_started"):
        gc["why_not"] = gc["why_not"] or "the soak never reached its load"
    for w in doc["windows"]:
        inside = [p for p in gc["pauses"] if p[0] is not None and w["t_s"] <= p[0] < w["t_s"] + w["seconds"]]
        w["gc_pauses"] = len(inside) if gc["available"] else None
        w["gc_total_ms"] = round(sum(p[1] for p in inside), 3) if gc["available"] else None
        w["gc_longest_ms"] = max((p[1] for p in inside), default=0.0) if gc["available"] else None
    # A soak recorded before lead-ins existed has no "lead_in" key: its first window was the start of the load.
    first_is_lead_in = "lead_in" not in doc
    doc["verdicts"] = soak_verdicts.judge(doc["windows"], gc["pauses"], gc["available"], gc["why_not"], th,
                                          doc.get("exited"), doc.get("lead_in"), first_is_lead_in)
    threshold = doc["verdicts"]["latency"]["threshold_ms"]
    lead_ins = [doc["lead_in"]] if doc.get("lead_in") else doc["windows"][:1] if first_is_lead_in else []
    for w in ([doc["lead_in"]] if doc.get("lead_in") else []) + doc["windows"]:
        flags = soak_verdicts.window_flags(w, threshold, th)
        if any(w is x for x in lead_ins):
            flags = ["lead-in"] + [f for f in flags if f == "errors"]
        w["flags"] = (flags + (["disturbed"] if w.get("disturbed") else [])
                      + (["generator-saturated"] if w.get("generator_saturated") else []))
    doc["complete"] = bool(doc["windows"]) and not doc.get("interrupted") and not doc.get("refused") and not doc.get("exited") \
        and len(doc["windows"]) == (doc.get("plan") or {}).get("windows")


def thresholds_for(doc: dict, env=None) -> soak_verdicts.Thresholds:
    """The thresholds to judge a stored soak by: this harness's defaults; over them the ones the
    soak's own command set (LEAK_MIB_PER_H=... given to make soak is part of what was asked, and
    SoakSettings.command writes only those that differ from the defaults); over them the ones `env`
    sets (make report RESULTS=... STALL_FLOOR_MS=100)."""
    try:
        words = shlex.split(doc.get("command") or "")
    except ValueError:
        words = []
    asked = dict(w.split("=", 1) for w in words if "=" in w)
    th = thresholds_from({name: asked[name] for _, name, _ in THRESHOLD_KNOBS if name in asked},
                         soak_verdicts.Thresholds())
    return thresholds_from(os.environ if env is None else env, th)


def rejudge(doc: dict, out_dir: pathlib.Path, env=None) -> dict | None:
    """The verdicts of a stored soak drawn again from its windows with this harness's code and
    thresholds (thresholds_for), the GC pauses read again from raw/gc when the logs are still there.
    The verdicts it was saved with are kept once, as `verdicts_as_run`; `rejudged` says when, by
    which commit, and the flags before. Returns that record (None: nothing was measured to judge)."""
    if doc.get("verdicts") is None or not doc.get("windows"):
        return None
    before = list(doc["verdicts"].get("flags") or [])
    doc.setdefault("verdicts_as_run", doc["verdicts"])
    th = thresholds_for(doc, env)
    conclude(doc, out_dir, th, read_gc=gc_logs_kept(doc, out_dir))
    doc["rejudged"] = {"at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "git": machine.git(), "flags_before": before, "flags": doc["verdicts"]["flags"],
                       "flags_as_run": doc["verdicts_as_run"].get("flags") or []}
    return doc["rejudged"]


class Ticker:
    """The terminal while the soak runs: a line when a window starts or ends a flagged stretch, and
    one progress line every cfg.progress_s seconds (the windows since the last one, and the ETA)."""

    def __init__(self, soak: Soak, t0: float, n: int):
        self.soak, self.t0, self.n = soak, t0, n
        self.recent: list[dict] = []
        self.last_progress = t0
        self.streak: tuple[str, ...] = ()
        self.streak_from: float = 0.0

    def window(self, w: dict) -> None:
        self.recent.append(w)
        doc, th = self.soak.doc, self.soak.cfg.thresholds
        p99s = [x["p99_ms"] for x in doc["windows"] if x.get("p99_ms") is not None]
        threshold = soak_verdicts.stall_threshold(p99s, th)
        flags = tuple(soak_verdicts.window_flags(w, threshold, th)) if len(p99s) >= 3 or not w.get("answered") else ()
        if flags != self.streak:
            if self.streak:
                self.soak.say(f"soak: [{plan.fmt(w['t_s'])}] ⚑ {'+'.join(self.streak)} ended after "
                              f"{w['t_s'] - self.streak_from:,.0f} s", flush=True)
            if flags:
                self.soak.say(f"soak: [{plan.fmt(w['t_s'])}] ⚑ {'+'.join(flags)}: {describe_window(w)} "
                              f"(stall threshold {threshold:,.1f} ms)", flush=True)
            self.streak, self.streak_from = flags, w["t_s"]

    def lead_in(self, w: dict) -> None:
        self.soak.say(f"soak: lead-in (not judged): {describe_window(w)}", flush=True)

    def maybe_progress(self) -> None:
        now = time.monotonic()
        if now - self.last_progress < self.soak.cfg.progress_s or not self.recent:
            return
        self.last_progress = now
        elapsed = now - self.t0
        done = len(self.soak.doc["windows"])
        eta = (self.n - done) * self.soak.cfg.window
        ws, self.recent = self.recent, []
        first = self.soak.doc["windows"][0].get("rss_bytes") or 0
        last = ws[-1].get("rss_bytes") or 0
        pauses = self._gc_since(ws[0]["t_s"])
        self.soak.say(f"[{plan.fmt(elapsed)} {min(100, int(100 * done / self.n)):3d}% ETA {plan.fmt(eta)}] "
                      f"{summary_line(ws)}, RSS {report_md.fmt_mib(last)} MiB ({(last - first) / 2**20:+,.1f} since the "
                      f"start), {pauses}", flush=True)

    def _gc_since(self, t_s: float) -> str:
        s = self.soak
        if s.gc_kind == "jvm":
            started = {int(p): v for p, v in s.doc["processes"].items()}
            ps = [p for p in gclog.read("jvm", s.gc_dir, None, started)[0]
                  if p.t is not None and p.t - s.doc["soak_started"] >= t_s]
            return f"GC {len(ps)} pauses, longest {max((p.ms for p in ps), default=0):,.1f} ms"
        if s.gc_kind == "node":
            return "GC: read at the end (V8 writes through stdout's buffer)"
        return "no GC log"


def summary_line(ws: list[dict]) -> str:
    offered = sum(w["offered"] for w in ws)
    answered = sum(w.get("answered") or 0 for w in ws)
    secs = sum(w["seconds"] for w in ws)
    errors = sum(sum((w.get("errors") or {}).values()) for w in ws)
    cpu = stats.median([w.get("server_cpu_share") for w in ws])
    return (f"{answered / secs:,.0f} of {offered / secs:,.0f} req/s answered, p50 {report_md.fmt_ms(stats.median([w.get('p50_ms') for w in ws]))} ms, "
            f"p99 {report_md.fmt_ms(stats.median([w.get('p99_ms') for w in ws]))} ms (worst window "
            f"{report_md.fmt_ms(max((w.get('p99_ms') or 0 for w in ws), default=None))}), max "
            f"{report_md.fmt_ms(max((w.get('max_ms') or 0 for w in ws), default=None))} ms, errors {errors:,}, "
            f"server CPU {report_md.fmt_pct(cpu)}")


def describe_window(w: dict) -> str:
    if not w.get("answered"):
        return f"no answers to {w['offered']:,} requests"
    return (f"p99 {report_md.fmt_ms(w.get('p99_ms'))} ms, max {report_md.fmt_ms(w.get('max_ms'))} ms, answered "
            f"{w['answered']:,} of {w['offered']:,}, errors {sum((w.get('errors') or {}).values()):,}")


def _sleep_until(t: float) -> None:
    while True:
        left = t - time.monotonic()
        if left <= 0:
            return
        time.sleep(min(left, 0.5))


# ---------------------------------------------------------------- files

def write(doc: dict, out_dir: pathlib.Path) -> pathlib.Path:
    path = out_dir / "results.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False))
    os.replace(tmp, path)
    return path


def read(path) -> dict:
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / "results.json"
    doc = json.loads(path.read_text())
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not a soak's results.json (schema {doc.get('schema')!r})")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version {doc.get('schema_version')}, this harness reads {SCHEMA_VERSION}")
    return doc


def report_again(out_dir: pathlib.Path, env=None, say=print) -> pathlib.Path:
    """`make report RESULTS=results/soak-<...>`: the verdicts drawn again (rejudge), results.json
    rewritten with them, then the reports."""
    doc = read(out_dir)
    done = rejudge(doc, out_dir, env)
    if done is not None:
        write(doc, out_dir)
        th = doc["verdicts"]["thresholds"]
        said = ", ".join(f"{k} {v:g}" for k, v in th.items())
        was = " ".join(done["flags_before"]) or "none"
        now = " ".join(done["flags"]) or "none"
        say(f"soak: verdicts drawn again from the {len(doc['windows'])} stored windows with this harness "
            f"(commit {(done['git'].get('commit') or '?')[:12]}; thresholds: {said}): flags {was} -> {now}"
            + ("" if done["flags_as_run"] == done["flags_before"] else
               f" (as the soak ran: {' '.join(done['flags_as_run']) or 'none'})"))
    return render(out_dir, doc)


def is_soak(path) -> bool:
    path = pathlib.Path(path)
    path = path / "results.json" if path.is_dir() else path
    try:
        return json.loads(path.read_text()).get("schema") == SCHEMA
    except (OSError, ValueError):
        return False


def results_dir(path) -> pathlib.Path:
    path = pathlib.Path(path)
    return path if path.is_dir() else path.parent


def render(out_dir: pathlib.Path, doc: dict | None = None) -> pathlib.Path:
    from harness.soak import report as soak_report
    doc = read(out_dir) if doc is None else doc
    (out_dir / "report.md").write_text(soak_report.render_md(doc))
    (out_dir / "report.html").write_text(soak_report.render_html(doc))
    return out_dir


# ---------------------------------------------------------------- make soak

USAGE = ("usage: make soak STACK=<name> ENDPOINT=<" + "|".join(ENDPOINTS) + "> [RATE=<req/s> | RATE_FRACTION=0.5] "
         "[DURATION=3600] [WINDOW=5] [CONNECTIONS=n] [STACK_ENV='VAR=value ...'] [WARMUP_MAX=60] [BUILD=0]")


def main(env=None) -> int:
    """`make soak`: 0 when the soak ran to its end (flags or not: they are findings, printed and in the
    report), 1 when it could not be measured (refused, or the stack exited), 2 on bad input, 130 when interrupted."""
    try:
        cfg = SoakSettings.from_env(env)
        (stack,) = with_port_offset(stacks.select(cfg.stack), env)
    except (ab.Usage, stacks.StackError) as e:
        print(f"soak: {e}\n{USAGE}", file=sys.stderr)
        return 2
    reason = stack.unavailable_reason()
    if reason:
        print(f"soak: {stack.name}: unavailable here: {reason}", file=sys.stderr)
        return 2
    if not loadgen_oha.binary():
        print("soak: oha not found: the soak's open-loop load needs it (make setup installs it)", file=sys.stderr)
        return 2
    typos = ab.unread_knobs(stack, cfg.env)
    if typos:
        print(f"soak: warning: STACK_ENV sets {', '.join(typos)}, which appear nowhere in {stack.name}/ nor in the "
              "contract's defaults (fine for what the runtime reads itself: JAVA_TOOL_OPTIONS, NODE_OPTIONS)",
              file=sys.stderr)
    return run_soak(cfg, stack)


def run_soak(cfg: SoakSettings, stack: stacks.Stack, out_dir: pathlib.Path | None = None) -> int:
    """The soak with its terminal output and exit code (main's, once the settings are read)."""
    from harness.soak import report as soak_report
    soak = Soak(cfg, stack, cpus.Layout.from_env(), out_dir)
    try:
        soak.run()
    except KeyboardInterrupt:
        if soak.doc:
            print(soak_report.render_md(soak.doc))
        print(f"soak: interrupted; what it measured is in {soak.dir / 'results.json'} and {soak.dir / 'report.html'}",
              file=sys.stderr)
        return 130
    print(soak_report.render_md(soak.doc))
    print(f"soak: {soak.dir / 'report.html'} (the series: {soak.dir / 'results.json'}; raw tool output: {soak.dir / 'raw'})")
    if soak.doc["refused"]:
        print(f"soak: refused: {soak.doc['refused']}", file=sys.stderr)
        return 1
    if soak.doc.get("exited"):
        return 1
    return 0
