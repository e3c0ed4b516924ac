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
offline), report.md, raw/ (every window's oha JSON, the GC logs, the stack's log)."""
import datetime
import os
import pathlib
import shutil
import subprocess
import sys
import time

from harness import services, stacks
from harness.accounting import cpus, gclog, measure, stats
from harness.bench import box, calibrate, knobs, machine, plan
from harness.bench.settings import with_port_offset
from harness.config import LOG_DIR
from harness.contract.cases import ENDPOINTS
from harness.loadgen import oha as loadgen_oha
from harness.reports import report_md
from harness.soak import report as soak_report, verdicts as soak_verdicts
from harness.soak.conclusions import conclude
from harness.soak.files import SCHEMA, SCHEMA_VERSION, render, write
from harness.soak.settings import (
    DEFAULT_CONNECTIONS, PEAK_PROBE_S, SoakSettings, enough_connections, peak_from_results, too_few_connections
)
from harness.soak.windows import OHA_GRACE_S, WindowRun, accounting, read_boundary, window_record
from harness.verify import golden


class Soak:
    def __init__(self, cfg: SoakSettings, stack: stacks.Stack, layout: cpus.Layout, out_dir: pathlib.Path | None = None,
                 out=print):
        self.cfg, self.stack, self.layout, self.say = cfg, stack, layout, out
        self.bench = box.Box(cfg.bench_settings(), layout, out_dir, prefix="soak-")
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
        with box.exclusive():
            return self._run()

    def _run(self) -> pathlib.Path:
        cfg, stack = self.cfg, self.stack
        limits = box.raise_nofile()
        started_at = datetime.datetime.now(datetime.timezone.utc)
        self.doc = {**machine.run_header(SCHEMA, SCHEMA_VERSION, started_at),
                    "interrupted": False, "refused": None, "command": None,
                    "stack": {"name": stack.name, "language": stack.language, "framework": stack.framework,
                              "port": stack.port},
                    "endpoint": cfg.endpoint, "env": cfg.env, "env_text": knobs.env_text(cfg.env),
                    "settings": cfg.as_dict(), "plan": None, "cpu_layout": self.layout.as_dict(), "limits": limits,
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
                    raise golden.Refused(str(e)) from None
                self.doc["versions"] = machine.stack_versions(stack)
            self._start_and_soak()
        except golden.Refused as e:
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
            machine.run_footer(self.doc, started_at)
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
            raise golden.Refused(str(e)) from None
        env = {**cfg.env, **gc_env}
        if self.gc_kind in ("jvm", "node"):
            self.doc["gc"].update(log="raw/gc/gc-<pid>.log (JVM unified logging: -Xlog:" + gclog.JVM_TAGS + ")"
                                  if self.gc_kind == "jvm" else
                                  "raw/stack-run.log (V8 --trace-gc, switched on by NODE_OPTIONS=--require "
                                  "harness/accounting/node_trace_gc.cjs)", env=gc_env)
        try:
            self.running = bench.start_pinned(stack, env)
        except stacks.StackError as e:
            raise golden.Refused(f"{stack.name} did not start: {e}") from None
        said = f"{stack.name} ({knobs.env_text(cfg.env) or 'the defaults'})"
        self.doc["proof"] = golden.prove(stack, cfg.endpoint, golden.golden_cases(cfg.endpoint), said)
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
        found = peak_from_results(box.RESULTS_ROOT, self.stack.name, cfg.endpoint, self.doc["machine"])
        plan_ = {"rate_fraction": None, "peak_rps": None, "peak_source": None, "connections_source": None}
        if cfg.rate:
            rate, plan_["rate_source"] = cfg.rate, "RATE"
        elif found:
            rate = cfg.rate_fraction * found["peak_rps"]
            plan_.update(rate_fraction=cfg.rate_fraction, peak_rps=found["peak_rps"], peak_source=found,
                         rate_source=f"{cfg.rate_fraction:g} x {report_md.fmt_rps(found['peak_rps'])} req/s, the headline "
                                     f"of {found['source']} ({found['started']})")
        else:
            self.say(f"soak: no results.json under {box.RESULTS_ROOT} has {self.stack.name} /{cfg.endpoint} on this "
                     f"machine: measuring its closed-loop peak first ({PEAK_PROBE_S:g} s at {DEFAULT_CONNECTIONS} "
                     "connections) ...", flush=True)
            self.bench.settle(self.stack)
            probe = self.bench.closed_run(self.stack.url, cfg.endpoint, DEFAULT_CONNECTIONS, PEAK_PROBE_S, root,
                                          "peak-probe.txt")
            self.doc["peak_probe"] = probe
            peak = probe.get("throughput_rps")
            if not peak:
                raise golden.Refused(f"the peak probe got no answers from {self.stack.name} /{cfg.endpoint}: "
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
            raise golden.Refused(short)
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
        readings: dict[int, measure.Snapshot] = {}
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


USAGE = ("usage: make soak STACK=<name> ENDPOINT=<" + "|".join(ENDPOINTS) + "> [RATE=<req/s> | RATE_FRACTION=0.5] "
         "[DURATION=3600] [WINDOW=5] [CONNECTIONS=n] [STACK_ENV='VAR=value ...'] [WARMUP_MAX=60] [BUILD=0]")


def main(env=None) -> int:
    """`make soak`: 0 when the soak ran to its end (flags or not: they are findings, printed and in the
    report), 1 when it could not be measured (refused, or the stack exited), 2 on bad input, 130 when interrupted."""
    try:
        cfg = SoakSettings.from_env(env)
        (stack,) = with_port_offset(stacks.select(cfg.stack), env)
    except (knobs.Usage, stacks.StackError) as e:
        print(f"soak: {e}\n{USAGE}", file=sys.stderr)
        return 2
    reason = stack.unavailable_reason()
    if reason:
        print(f"soak: {stack.name}: unavailable here: {reason}", file=sys.stderr)
        return 2
    if not loadgen_oha.binary():
        print("soak: oha not found: the soak's open-loop load needs it (make setup installs it)", file=sys.stderr)
        return 2
    typos = knobs.unread_knobs(stack, cfg.env)
    if typos:
        print(f"soak: warning: STACK_ENV sets {', '.join(typos)}, which appear nowhere in {stack.name}/ nor in the "
              "contract's defaults (fine for what the runtime reads itself: JAVA_TOOL_OPTIONS, NODE_OPTIONS)",
              file=sys.stderr)
    return run_soak(cfg, stack)


def run_soak(cfg: SoakSettings, stack: stacks.Stack, out_dir: pathlib.Path | None = None) -> int:
    """The soak with its terminal output and exit code (main's, once the settings are read)."""
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
