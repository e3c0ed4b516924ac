"""A whole benchmark run: services, ceilings, then per stack verify -> start -> prime -> warm -> load.

Everything a run measures goes into one dict (results.json) as soon as it is measured, so an
interrupted run still leaves what it finished; the reports are rendered from that file only.
"""
import datetime
import pathlib
import sys

from harness import services, stacks, verify
from harness.accounting import cpus
from harness.bench import calibrate, endpoint as endpoint_runner, machine, plan, profiles
from harness.bench.box import Box, exclusive, raise_nofile
from harness.bench.nginx_ceiling import Nginx
from harness.bench.settings import Settings
from harness.config import SERVICES, external_services
from harness.contract.cases import DATA_ENDPOINTS
from harness.reports import report_html, report_md, results
from harness.services import backends


class Bench(Box):
    """The whole run: services, ceilings, then per stack verify -> start -> prime -> warm -> load."""

    def __init__(self, settings: Settings, layout: cpus.Layout, out_dir: pathlib.Path | None = None,
                 prefix: str = ""):
        super().__init__(settings, layout, out_dir, prefix)
        self.doc: dict = {}
        self.progress: plan.Progress | None = None

    def save(self) -> None:
        results.write(self.doc, self.dir)

    def say(self, planned_s: float, message: str) -> None:
        self.progress.step(planned_s, message)

    def calibrate(self) -> None:
        ceilings = self.doc["ceilings"]
        if not self.s.calibrate:
            return
        if "hello" in self.s.endpoints:
            with Nginx(self.dir, "127.0.0.1", len(self.layout.server), self.layout.taskset("server")) as nginx:
                for c in self.s.concurrency:
                    rec = self.closed_run(nginx.url, "hello", c, self.s.calibration_duration, nginx.proc.pid,
                                          f"ceiling-hello-c{c}.txt")
                    ceilings.append({"endpoint": "hello", "connections": c, "throughput_rps": rec.get("throughput_rps"),
                                     "tool": "nginx return 200 + wrk", "method": "same wrk script and CPUs as the stacks",
                                     "run": rec})
                    self.say(self.s.calibration_duration + plan.TOOL_OVERHEAD_S,
                             f"ceiling hello  c={c:<5} nginx {rec.get('throughput_rps') or 0:>10,.0f} req/s "
                             f"{' '.join(rec['flags'])}")
                    self.save()
        for endpoint in self.s.endpoints:
            last_rps = None  # the level before's rate sizes the next level's run (calibrate.backend_ceiling)
            for c in self.s.concurrency:
                if endpoint == "sleep":
                    ceilings.append(calibrate.sleep_ceiling(c))
                elif endpoint in DATA_ENDPOINTS:
                    rec = calibrate.backend_ceiling(endpoint, c, self.s.calibration_duration,
                                                    self.layout.taskset("server"), self.acct(None), self.dir / "raw",
                                                    expected_rps=last_rps)
                    ceilings.append(rec)
                    self.say(plan.backend_ceiling_seconds(self.s, endpoint, sized=last_rps is not None),
                             f"ceiling {endpoint:8} c={c:<5} {rec['tool']} {rec.get('throughput_rps') or 0:>10,.0f} req/s")
                    last_rps = rec.get("throughput_rps")
                    self.save()

    def adjacent_ceiling(self, stack, endpoint: str, connections: int) -> dict:
        """The backend tool's ceiling again, at the headline's connections, right after the headline
        runs (the stack idle): the share of the bound divides by it rather than by the ceiling of the
        run's start, which on a machine whose speed drifts may be most of an hour away."""
        at_start = results.ceiling_for(self.doc, endpoint, connections)
        rec = calibrate.backend_ceiling(endpoint, connections, self.s.calibration_duration,
                                        self.layout.taskset("server"), self.acct(None), self.dir / "raw",
                                        f"{stack.name}-ceiling-{endpoint}-c{connections}.txt", expected_rps=at_start)
        self.say(plan.adjacent_ceiling_seconds(self.s, endpoint),
                 f"{stack.name:14} {endpoint:8} c={connections:<5} {rec['tool']} {rec.get('throughput_rps') or 0:>10,.0f} "
                 f"req/s (ceiling beside the headline; at the start {at_start or 0:,.0f})")
        return rec

    def bench_stack(self, stack, entry: dict) -> dict:
        """Fills `entry` (already in results.json's stack list) as it goes; returns it. Whatever of
        the stack's planned time was not spent (a failed stack) is counted as done, for the ETA."""
        before = self.progress.planned_done
        try:
            return self._bench_stack(stack, entry)
        finally:
            left = plan.stack_seconds(self.s) - (self.progress.planned_done - before)
            if left > 0:
                self.progress.step(left, None)

    def _bench_stack(self, stack, entry: dict) -> dict:
        entry.update({"name": stack.name, "language": stack.language, "framework": stack.framework,
                      "description": stack.description, "port": stack.port, "status": "running"})
        reason = stack.unavailable_reason()
        if reason:
            self.say(plan.stack_seconds(self.s), f"{stack.name}: unavailable: {reason}")
            entry.update(status="unavailable", reason=reason)
            return entry
        ok, checks = verify.verify_stack(stack, build_first=True)
        entry["versions"] = machine.stack_versions(stack)  # after the build: it may bring the runtime (`path`)
        known = [d for c in checks if c.known_deviation for d in c.deviations]
        entry["verify"] = {"ok": ok, "passed": sum(c.ok and not c.skipped for c in checks),
                           "failed": [c.name for c in checks if not c.accepted],
                           "skipped": [c.name for c in checks if c.skipped],
                           "deviated": [c.name for c in checks if c.known_deviation],
                           "deviations": known}
        self.say(plan.VERIFY_S, f"{stack.name}: " + ("verification FAILED" if not ok else
                 f"verified with {len(known)} known deviation{'s' if len(known) != 1 else ''} (declared in its "
                 f"stack.toml; benchmarked, and marked † in the report)" if known else "verified"))
        for name in SERVICES:  # an outage check that broke off must not leave a backend down
            services.start(name, quiet=True)
        self.pin_backends()
        if not ok:
            bad = next(c for c in checks if not c.accepted)
            entry.update(status="failed", reason=f"verification: {bad.name}: {bad.detail.splitlines()[0] if bad.detail else ''}")
            return entry
        try:
            running = self.start_pinned(stack)
        except stacks.StackError as e:
            entry.update(status="failed", reason=f"start: {str(e).splitlines()[0]}")
            return entry
        with running:
            problems = self.prime(stack)
            self.say(plan.START_S, f"{stack.name}: started (pid {running.pid}), primed"
                     + (f": {'; '.join(problems)}" if problems else ""))
            if problems:
                entry.update(status="failed", reason="primer: " + "; ".join(problems))
                return entry
            entry["warmup"] = self.warm_up(stack, running.pid)
            self.say(plan.warmup_seconds(self.s), f"{stack.name}: warmed up in {entry['warmup']['seconds']} s "
                     f"({'stable' if entry['warmup']['stable'] else 'still drifting at the limit'})")
            entry["endpoints"] = {}
            entry["status"] = "benchmarked"
            for endpoint in self.s.endpoints if self.s.sweep else []:
                if not running.alive():
                    entry["status"] = "error"
                    entry["reason"] = f"the stack exited (code {running.proc.returncode}) before {endpoint}; see {running.log}"
                    break
                entry["endpoints"][endpoint] = endpoint_runner.measure(OnThisBox(self, running.pid), stack, endpoint)
                self.save()
            self.run_profiles(stack, running, entry)
        return entry

    def run_profiles(self, stack, running, entry: dict) -> None:
        entry["profiles"] = {}
        for name in self.s.profiles:
            records = []
            entry["profiles"][name] = {"about": profiles.PROFILES[name].about, "runs": records}
            for i, prun in enumerate(profiles.PROFILES[name].runs):
                if not running.alive():
                    entry["status"] = "error"
                    entry["reason"] = f"the stack exited (code {running.proc.returncode}) in profile {name}; see {running.log}"
                    return
                self.settle(stack)
                rec = self.profile_run(stack, name, i, prun, running.pid)
                records.append(rec)
                self.say(self.s.profile_duration + plan.TOOL_OVERHEAD_S,
                         f"{stack.name:14} {name:8} {prun.label:32} {rec.get('throughput_rps') or 0:>10,.0f} req/s "
                         + " ".join(rec["flags"]))
                self.save()

    def run(self, selected) -> pathlib.Path:
        with exclusive():
            return self._run(selected)

    def _run(self, selected) -> pathlib.Path:
        limits = raise_nofile()
        estimate = plan.estimate(self.s, len(selected))
        started_at = datetime.datetime.now(datetime.timezone.utc)
        print(f"bench: {len(selected)} stack(s) x {len(self.s.endpoints)} endpoint(s), levels "
              f"{self.s.concurrency}, {self.s.duration:g} s each, {self.s.repeats} repeat(s) of the best, open loop at "
              f"{[f'{r:.0%}' for r in self.s.open_rates]}{' (QUICK)' if self.s.quick else ''}")
        print(f"bench: estimated {plan.fmt(estimate['total_s'])} (~{plan.fmt(estimate['per_stack_s'])} per stack, "
              f"calibration {plan.fmt(estimate['calibration_s'])}); results in {self.dir}")
        print(f"bench: CPUs server={self.layout.as_dict()['server']} loadgen={self.layout.as_dict()['loadgen']} "
              f"backends={self.layout.as_dict()['backends']} ({self.layout.source}); nofile={limits['nofile_soft']}, "
              f"somaxconn={limits['somaxconn']}", flush=True)
        if not self.oha:
            print("bench: oha not found: open-loop runs are skipped", file=sys.stderr)
        self.progress = plan.Progress(estimate["total_s"])
        self.doc = {**machine.run_header(results.SCHEMA, results.SCHEMA_VERSION, started_at), "run_id": self.dir.name,
                    "settings": self.s.as_dict(), "estimate": estimate,
                    "cpu_layout": self.layout.as_dict(), "limits": limits,
                    "tools": machine.tool_versions(self.oha),
                    "services": {n: ("external" if n in external_services() else "local") for n in SERVICES},
                    "ceilings": [], "stacks": []}
        self.save()
        started = self.setup_services()
        try:
            self.doc["backend_pids_pinned"] = {k: v for k, v in self.backend_pids.items()}
            self.doc["mysql_thread_handling"] = backends.mysql_thread_handling()
            self.calibrate()
            for stack in selected:
                entry = {"name": stack.name}
                self.doc["stacks"].append(entry)
                try:
                    self.bench_stack(stack, entry)
                except (stacks.StackError, services.ServiceError, OSError) as e:
                    entry.update(status="error", reason=str(e).splitlines()[0])
                self.save()
            self.doc["complete"] = True
        finally:
            for name in SERVICES:  # a verification interrupted half-way must not leave a backend down
                services.start(name, quiet=True)
            services.down(started)
            machine.run_footer(self.doc, started_at)
            self.save()
            results.link_latest(self.dir.parent, self.dir)
            render(self.dir)  # an interrupted run still gets its (partial) reports
        print(report_md.summary_table(self.doc))
        print(f"\nbench: done in {plan.fmt(self.doc['duration_s'])} (estimated {plan.fmt(estimate['total_s'])}); "
              f"report: {self.dir / 'report.html'} and report.md")
        return self.dir


class OnThisBox:
    """endpoint.Where on one box: the loads run here on the load generator's CPUs, with the server
    tree under `root` accounted; the backend tool's ceiling runs on the server's CPUs."""

    def __init__(self, bench: Bench, root: int):
        self.bench, self.root, self.s, self.doc = bench, root, bench.s, bench.doc

    def settle(self, stack) -> float:
        return self.bench.settle(stack)

    def load_closed(self, stack, endpoint: str, connections: int, duration: float, raw_name: str) -> dict:
        return self.bench.closed_run(stack.url, endpoint, connections, duration, self.root, raw_name)

    def load_open(self, stack, endpoint: str, rate: float, connections: int, raw_name: str) -> dict:
        return self.bench.open_run(stack.url, endpoint, rate, connections, self.root, raw_name)

    def adjacent_ceiling(self, stack, endpoint: str, connections: int) -> dict:
        return self.bench.adjacent_ceiling(stack, endpoint, connections)

    def open_loop_unavailable(self) -> str | None:
        return None if self.bench.oha else "oha not installed (make setup)"

    def tell(self, planned_s: float, line: str) -> None:
        self.bench.say(planned_s, line)

    def origin(self, record: dict) -> str:
        return ""


def render(path) -> pathlib.Path:
    """results.json -> report.md + report.html in the same directory."""
    path = pathlib.Path(path)
    run_dir = path if path.is_dir() else path.parent
    doc = results.read(run_dir)
    (run_dir / "report.md").write_text(report_md.render(doc))
    (run_dir / "report.html").write_text(report_html.render(doc))
    return run_dir
