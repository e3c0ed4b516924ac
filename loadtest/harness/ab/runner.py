"""`make ab`: one stack, one endpoint, two environments, measured in turn (A B A B ...) so that
whatever drifts on the machine hits both sides; per side the median and spread of each figure, and
whether B differs from A by more than this run's own noise (stats.compare).

A stack's knobs are environment variables its run line reads, so any knob can be A/B-tested
without editing code. Every round starts the stack afresh with its side's environment, proves it
still answers the endpoint's golden cases (a knob that breaks the contract is refused, not
measured), warms it up and loads it with the benchmark's own machinery (bench.box.Box: CPU pinning,
wrk/oha, /proc accounting, flags). Output: results/ab-<UTC time>/ab.json with raw/ beside it, a
markdown summary on the terminal, and with SAVE= a compact copy for a stack README to cite."""
import datetime
import os
import pathlib
import shlex
import sys
import time
from dataclasses import asdict, dataclass

from harness import services, stacks
from harness.ab.files import SCHEMA, SCHEMA_VERSION, SIDES, save_compact
from harness.ab.report import figures, render_md, summarize
from harness.accounting import cpus
from harness.bench import box, knobs, machine, plan
from harness.bench.knobs import Usage, env_text, number, parse_env, unread_knobs
from harness.bench.settings import Settings, with_port_offset
from harness.contract.cases import ENDPOINTS
from harness.reports import report_md, store
from harness.verify.golden import Refused, golden_cases, prove


@dataclass
class AbSettings:
    stack: str
    endpoint: str
    a: dict
    b: dict
    rounds: int = 3                   # per side, alternating A B A B ...
    connections: int = 64             # one closed-loop level
    duration: float = 8.0             # seconds per measured run (closed, and open when asked)
    open_rate: float | None = None    # req/s of an optional open-loop run per round (oha)
    warmup_min: float = Settings.warmup_min
    warmup_max: float = Settings.warmup_max  # 0: no warm-up
    foreign_max: float = Settings.foreign_max
    save: str = ""                    # path (from the checkout) of the compact JSON for a stack README
    build: bool = True                # BUILD=0: use the stack as already built

    @classmethod
    def from_env(cls, env=None) -> "AbSettings":
        env = os.environ if env is None else env
        stack, endpoint = knobs.one_stack_and_endpoint(env)
        s = cls(stack, endpoint, parse_env(env.get("A", ""), "A"), parse_env(env.get("B", ""), "B"))
        s.rounds = number(env, "ROUNDS", int, s.rounds, 2)  # 2: a quick look, no verdict (stats.MIN_RUNS)
        s.connections = number(env, "CONNECTIONS", int, s.connections, 1)
        s.duration = number(env, "DURATION", float, s.duration, 1.0)
        s.open_rate = number(env, "OPEN_RATE", float, None, 1.0)
        s.warmup_max = number(env, "WARMUP_MAX", float, s.warmup_max, 0.0)
        s.warmup_min = min(s.warmup_min, s.warmup_max)
        s.foreign_max = number(env, "FOREIGN_MAX", float, s.foreign_max, 0.0)
        s.save = (env.get("SAVE") or "").strip()
        s.build = (env.get("BUILD") or "").strip() not in ("0", "no", "false")
        return s

    def bench_settings(self) -> Settings:
        return Settings(concurrency=[self.connections], duration=self.duration, repeats=self.rounds,
                        open_rates=[], open_duration=self.duration, warmup_min=self.warmup_min,
                        warmup_max=self.warmup_max, endpoints=[self.endpoint], stacks=self.stack,
                        calibrate=False, foreign_max=self.foreign_max)

    def knobs(self) -> dict:
        """How the sides were measured (what is measured, stack, endpoint and sides, is recorded apart)."""
        return {k: v for k, v in asdict(self).items() if k not in ("stack", "endpoint", "a", "b")}

    def env_of(self, side: str) -> dict:
        return self.a if side == "A" else self.b

    def command(self, layout: cpus.Layout) -> str:
        """The make command that repeats this A/B (the CPU layout too, when it was not the default)."""
        words = ["make", "ab", f"STACK={self.stack}", f"ENDPOINT={self.endpoint}",
                 f"A={shlex.quote(env_text(self.a))}", f"B={shlex.quote(env_text(self.b))}",
                 f"ROUNDS={self.rounds}", f"CONNECTIONS={self.connections}", f"DURATION={self.duration:g}"]
        if self.open_rate:
            words.append(f"OPEN_RATE={self.open_rate:g}")
        if self.warmup_max != Settings.warmup_max:
            words.append(f"WARMUP_MAX={self.warmup_max:g}")
        if self.foreign_max != Settings.foreign_max:
            words.append(f"FOREIGN_MAX={self.foreign_max:g}")
        if layout.source.startswith("environment"):
            words += [f"CPUS_SERVER={cpus.format_list(layout.server)}", f"CPUS_LOADGEN={cpus.format_list(layout.loadgen)}",
                      f"CPUS_BACKENDS={cpus.format_list(layout.backends)}"]
        return " ".join(words)


class Ab:
    def __init__(self, cfg: AbSettings, stack: stacks.Stack, layout: cpus.Layout, out_dir: pathlib.Path | None = None):
        self.cfg, self.stack, self.layout = cfg, stack, layout
        self.bench = box.Box(cfg.bench_settings(), layout, out_dir, prefix="ab-")
        self.dir = self.bench.dir
        self.cases = golden_cases(cfg.endpoint)
        self.doc: dict = {}

    def save(self) -> None:
        store.write(self.doc, self.dir / "ab.json")

    def run(self) -> pathlib.Path:
        with box.exclusive():
            return self._run()

    def _run(self) -> pathlib.Path:
        cfg, stack = self.cfg, self.stack
        limits = box.raise_nofile()
        started_at = datetime.datetime.now(datetime.timezone.utc)
        self.doc = {**machine.run_header(SCHEMA, SCHEMA_VERSION, started_at),
                    "refused": None, "command": cfg.command(self.layout),
                    "stack": {"name": stack.name, "framework": stack.framework, "port": stack.port},
                    "endpoint": cfg.endpoint, "sides": {s: {"env": cfg.env_of(s), "text": env_text(cfg.env_of(s))} for s in SIDES},
                    "settings": cfg.knobs(), "cpu_layout": self.layout.as_dict(), "limits": limits,
                    "tools": machine.tool_versions(self.bench.oha), "versions": machine.stack_versions(stack),
                    "rounds": [], "summary": None}
        self.save()
        per_start = f"{cfg.warmup_min:g}-{cfg.warmup_max:g} s warm-up + {cfg.duration:g} s" + (
            f" + {cfg.duration:g} s open loop at {cfg.open_rate:,.0f} req/s" if cfg.open_rate else "")
        print(f"ab: {stack.name} /{cfg.endpoint}, {cfg.rounds} rounds a side (A B A B ...), {cfg.connections} connections; "
              f"each start: golden cases + {per_start}")
        for side in SIDES:
            print(f"ab: {side} = {env_text(cfg.env_of(side)) or '(the defaults)'}")
        print(f"ab: CPUs server={self.layout.as_dict()['server']} loadgen={self.layout.as_dict()['loadgen']} "
              f"({self.layout.source}); results in {self.dir}", flush=True)
        if cfg.open_rate and not self.bench.oha:
            print("ab: oha not found: no open-loop runs (make setup installs it)", file=sys.stderr)
        started = self.bench.setup_services()
        t0 = time.monotonic()
        try:
            if cfg.build:
                print(f"ab: building {stack.name} ...", flush=True)
                try:
                    stacks.build(stack)
                except stacks.StackError as e:
                    raise Refused(str(e)) from None
            for i in range(1, cfg.rounds + 1):
                for side in SIDES:
                    rec = self.one_round(i, side)
                    self.doc["rounds"].append(rec)
                    self.save()
                    print(f"[{plan.fmt(time.monotonic() - t0)}] {progress_line(rec)}", flush=True)
            self.doc["complete"] = True
        except Refused as e:
            self.doc["refused"] = str(e)
        finally:
            services.down(started)
            machine.run_footer(self.doc, started_at)
            self.doc["summary"] = summarize(self.doc) if self.doc["rounds"] else None
            self.save()
        return self.dir

    def one_round(self, i: int, side: str) -> dict:
        cfg, stack, bench = self.cfg, self.stack, self.bench
        said = f"side {side} ({env_text(cfg.env_of(side)) or 'the defaults'})"
        t = time.monotonic()
        try:
            running = bench.start_pinned(stack, cfg.env_of(side))
        except stacks.StackError as e:
            raise Refused(f"{said}: {stack.name} did not start: {e}") from None
        prefix = f"round{i}-{side}"
        with running:
            start_s = round(time.monotonic() - t, 2)
            proof = self.prove(said)
            warmup = bench.warm_up(stack, running.pid, prefix) if cfg.warmup_max > 0 else None
            settle = bench.settle(stack)
            closed = bench.closed_run(stack.url, cfg.endpoint, cfg.connections, cfg.duration, running.pid,
                                      f"{prefix}-closed-c{cfg.connections}.txt")
            closed["settle_s"] = settle
            opened = None
            if cfg.open_rate and bench.oha:
                settle = bench.settle(stack)
                opened = bench.open_run(stack.url, cfg.endpoint, cfg.open_rate, cfg.connections, running.pid,
                                        f"{prefix}-open-{cfg.open_rate:g}.txt")
                opened["settle_s"] = settle
            if not running.alive():
                raise Refused(f"{said}: {stack.name} exited (code {running.proc.returncode}) during round {i}'s load; "
                              f"see {running.log}")
        flags = sorted(set(closed["flags"]) | set((opened or {}).get("flags", [])))
        return {"round": i, "side": side, "start_s": start_s, "proof": proof, "warmup": warmup,
                "closed": closed, "open": opened, "figures": figures(closed, opened), "flags": flags}

    def prove(self, said: str) -> str:
        return prove(self.stack, self.cfg.endpoint, self.cases, said)


def progress_line(rec: dict) -> str:
    f = rec["figures"]
    w = rec["warmup"]
    parts = [f"round {rec['round']} {rec['side']}: started in {rec['start_s']:.1f} s, {rec['proof']}"]
    if w:
        parts.append(f"warmed {w['seconds']:g} s{'' if w['stable'] else ' (still drifting)'}")
    parts.append(f"{report_md.fmt_rps(f['throughput_rps'])} req/s, CPU {f['cpu_us_per_request'] or 0:,.1f} µs/req, "
                 f"p99 {report_md.fmt_ms(f['p99_ms'])} ms"
                 + (f", open p99 {report_md.fmt_ms(f['open_p99_ms'])} ms" if rec["open"] else "")
                 + f", peak RSS {report_md.fmt_mib(f['peak_rss_bytes'])} MiB, steal {f['steal_s']:.1f} s")
    return "; ".join(parts) + (f" [{' '.join(rec['flags'])}]" if rec["flags"] else "")


def main(env=None) -> int:
    """`make ab`: 0 when both sides were measured, 1 when a side was refused, 2 on bad input."""
    try:
        cfg = AbSettings.from_env(env)
        (stack,) = with_port_offset(stacks.select(cfg.stack), env)
    except (Usage, stacks.StackError) as e:
        print(f"ab: {e}\nusage: make ab STACK=<name> ENDPOINT=<{'|'.join(ENDPOINTS)}> A='VAR=value ...' B='VAR=value ...' "
              "[ROUNDS=3] [CONNECTIONS=64] [DURATION=8] [OPEN_RATE=<req/s>] [SAVE=<stack>/tuning/<knob>.json]",
              file=sys.stderr)
        return 2
    reason = stack.unavailable_reason()
    if reason:
        print(f"ab: {stack.name}: unavailable here: {reason}", file=sys.stderr)
        return 2
    for side in SIDES:
        typos = unread_knobs(stack, cfg.env_of(side))
        if typos:
            print(f"ab: warning: {side} sets {', '.join(typos)}, which appear nowhere in {stack.name}/ nor in the "
                  "contract's defaults: unless the runtime itself reads it (JAVA_TOOL_OPTIONS, NODE_OPTIONS, ...), "
                  "this measures the defaults twice", file=sys.stderr)
    ab = Ab(cfg, stack, cpus.Layout.from_env())
    try:
        ab.run()
    except KeyboardInterrupt:
        if ab.doc:
            print(render_md(ab.doc))
        print(f"ab: interrupted; what it finished is in {ab.dir / 'ab.json'}", file=sys.stderr)
        return 130
    print(render_md(ab.doc))
    print(f"ab: {ab.dir / 'ab.json'} (raw tool outputs in {ab.dir / 'raw'})")
    if ab.doc["refused"]:
        print(f"ab: refused: {ab.doc['refused']}", file=sys.stderr)
        return 1
    if cfg.save:
        print(f"ab: saved {save_compact(ab.doc, cfg.save)}")
    return 0
