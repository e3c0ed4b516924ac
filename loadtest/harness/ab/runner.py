"""`make ab`: one stack, one endpoint, two environments, measured in turn (A B A B ...) so that
whatever drifts on the machine hits both sides; per side the median and spread of each figure, and
whether B differs from A by more than this run's own noise (stats.compare).

A stack's knobs are environment variables its run line reads, so any knob can be A/B-tested
without editing code. Every round starts the stack afresh with its side's environment, proves it
still answers the endpoint's golden cases (a knob that breaks the contract is refused, not
measured), warms it up and loads it with the benchmark's own machinery (run.Bench: CPU pinning,
wrk/oha, /proc accounting, flags). Output: results/ab-<UTC time>/ab.json with raw/ beside it, a
markdown summary on the terminal, and with SAVE= a compact copy for a stack README to cite.
"""
import datetime
import json
import os
import pathlib
import re
import shlex
import sys
import time
import urllib.parse
from dataclasses import asdict, dataclass

from harness import contract, services, stacks, verify
from harness.accounting import cpus, stats
from harness.bench import machine, plan, run
from harness.bench.settings import Settings, with_port_offset
from harness.config import ROOT, settings as contract_settings
from harness.contract.cases import ENDPOINTS
from harness.contract.checking import Target
from harness.reports import report_md

SCHEMA = "reference-servers/ab"
SCHEMA_VERSION = 1
SIDES = ("A", "B")
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
SET_BY_HARNESS = {"PORT", "STACK_NAME", "RUN_DIR"}  # stacks.Stack.env() overrides these whatever a side says
NOT_SOURCE = {"node_modules", "target", "vendor", "build", ".git", "__pycache__"}

# key in a round's figures, label, unit formatter, whether higher is better
FIGURES = [
    ("throughput_rps", "req/s", report_md.fmt_rps, True),
    ("cpu_us_per_request", "CPU µs/req", lambda v: "–" if v is None else f"{v:,.1f}", False),
    ("p99_ms", "closed p99 ms", report_md.fmt_ms, False),
    ("open_p99_ms", "open p99 ms", report_md.fmt_ms, False),
    ("peak_rss_bytes", "peak RSS MiB", report_md.fmt_mib, False),
]


class Usage(ValueError):
    """Bad input: said plainly, nothing started."""


class Refused(RuntimeError):
    """A side that cannot be measured honestly (it does not start, or breaks the contract)."""


def parse_env(text: str, side: str) -> dict[str, str]:
    """'VAR=value OTHER="a b"' (shell quoting) -> {VAR: value, OTHER: a b}; empty = the stack's defaults."""
    try:
        words = shlex.split(text or "")
    except ValueError as e:
        raise Usage(f"{side}={text!r}: {e}") from None
    out: dict[str, str] = {}
    for word in words:
        name, eq, value = word.partition("=")
        if not eq or not NAME.match(name):
            raise Usage(f"{side}: {word!r} is not VAR=value (a variable name, '=', its value)")
        if name in SET_BY_HARNESS:
            raise Usage(f"{side}: {name} is set by the harness for every start and cannot be A/B-tested")
        if name in out:
            raise Usage(f"{side}: {name} is given twice")
        out[name] = value
    return out


def env_text(env: dict[str, str]) -> str:
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())


def number(env, key: str, kind, default, low):
    """env[key] as `kind` (default when unset or empty), at least `low`; Usage when it is not."""
    raw = (env.get(key) or "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise Usage(f"{key}={raw!r} is not a number") from None
    if value < low:
        raise Usage(f"{key}={raw}: at least {low}")
    return value


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
        stack = (env.get("STACK") or "").strip()
        endpoint = (env.get("ENDPOINT") or "").strip().lstrip("/")
        if not stack or "," in stack:
            raise Usage("STACK=<one stack> is required (see make list)")
        if endpoint not in ENDPOINTS:
            raise Usage(f"ENDPOINT={endpoint!r}: one of {', '.join(ENDPOINTS)}")
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


def golden_cases(endpoint: str) -> list[contract.Case]:
    """The contract's cases for one endpoint's path (with or without a trailing slash, any method)."""
    return [c for c in contract.cases() if urllib.parse.urlsplit(c.target).path.rstrip("/") == f"/{endpoint}"]


def unread_knobs(stack: stacks.Stack, env: dict) -> list[str]:
    """Names that appear nowhere in the stack's own files nor in the contract's defaults: typos,
    which would measure the defaults twice and call it noise, unless a runtime reads them itself
    (JAVA_TOOL_OPTIONS, NODE_OPTIONS): so a warning, not a refusal."""
    known = set(contract_settings())
    wanted = {n for n in env if n not in known}
    for path in _source_files(pathlib.Path(stack.dir)):
        if not wanted:
            break
        try:
            text = path.read_text(errors="ignore")
        except OSError:
            continue
        wanted = {n for n in wanted if n not in text}
    return sorted(wanted)


def _source_files(root: pathlib.Path):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in NOT_SOURCE]
        for name in filenames:
            path = pathlib.Path(dirpath, name)
            try:
                if path.stat().st_size <= 1 << 20:
                    yield path
            except OSError:
                continue


def figures(closed: dict, opened: dict | None) -> dict:
    """One round's numbers, from the benchmark's run records (RESULTS.md, "A run")."""
    runs = [r for r in (closed, opened) if r]
    rss = [((r.get("stats") or {}).get("memory") or {}).get("peak_rss_bytes") for r in runs]
    return {
        "throughput_rps": closed.get("throughput_rps"),
        "cpu_us_per_request": closed.get("cpu_us_per_request"),
        "p99_ms": (closed.get("latency_ms") or {}).get("p99"),
        "open_p99_ms": ((opened or {}).get("latency_ms") or {}).get("p99") if opened else None,
        "open_achieved_fraction": (opened or {}).get("achieved_fraction"),
        "peak_rss_bytes": max(stats.present(rss), default=None),
        "errors": sum(sum((r.get("errors") or {}).values()) for r in runs),
        "steal_s": round(sum((r.get("stats") or {}).get("steal_s") or 0 for r in runs), 3),
        "foreign_cpu_share": max(stats.present((r.get("stats") or {}).get("foreign_cpu_share") for r in runs), default=None),
    }


def summarize(doc: dict) -> dict:
    """Per figure: each side's median and spread, B against A, the verdict; and the caveats that
    apply to the whole run (disturbed rounds, a saturated generator, errors)."""
    rounds = doc["rounds"]
    out = {"figures": {}, "caveats": []}
    for key, label, fmt, higher in FIGURES:
        if key == "open_p99_ms" and not doc["settings"]["open_rate"]:
            continue
        samples = {side: [r["figures"].get(key) for r in rounds if r["side"] == side] for side in SIDES}
        verdict = stats.compare(samples["A"], samples["B"], higher_is_better=higher, fmt=fmt)
        out["figures"][key] = {"label": label, "higher_is_better": higher, "samples": samples, **verdict.as_dict()}
    n = [sum(1 for r in rounds if r["side"] == side) for side in SIDES]
    out["false_positive_bound"] = round(stats.false_positive_bound(*n), 4) if all(n) else None
    disturbed = [f"{r['side']}{r['round']}" for r in rounds if "disturbed" in r["flags"]]
    if disturbed:
        out["caveats"].append(f"disturbed rounds (foreign CPU over {doc['settings']['foreign_max']:.0%} of the machine, "
                              f"steal included): {', '.join(disturbed)}; confirm on a quieter machine")
    saturated = [f"{r['side']}{r['round']}" for r in rounds if "generator-saturated" in r["flags"]]
    if saturated:
        out["caveats"].append(f"the load generator was saturated in {', '.join(saturated)}: req/s there is the "
                              "client's limit, not the server's")
    behind = [f"{r['side']}{r['round']}" for r in rounds if "behind-rate" in r["flags"]]
    if behind:
        out["caveats"].append(f"open loop fell behind the offered rate in {', '.join(behind)}: its p99 describes an overloaded server")
    errors = {f"{r['side']}{r['round']}": r["figures"]["errors"] for r in rounds if r["figures"].get("errors")}
    if errors:
        out["caveats"].append("rounds with errors (non-2xx, socket errors, timeouts): "
                              + ", ".join(f"{k} {v:,}" for k, v in errors.items()))
    return out


class Ab:
    def __init__(self, cfg: AbSettings, stack: stacks.Stack, layout: cpus.Layout, out_dir: pathlib.Path | None = None):
        self.cfg, self.stack, self.layout = cfg, stack, layout
        self.bench = run.Bench(cfg.bench_settings(), layout, out_dir, prefix="ab-")
        self.dir = self.bench.dir
        self.cases = golden_cases(cfg.endpoint)
        self.doc: dict = {}

    def save(self) -> None:
        path = self.dir / "ab.json"
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(self.doc, indent=1, ensure_ascii=False))
        os.replace(tmp, path)

    def run(self) -> pathlib.Path:
        with run.exclusive():
            return self._run()

    def _run(self) -> pathlib.Path:
        cfg, stack = self.cfg, self.stack
        limits = run.raise_nofile()
        started_at = datetime.datetime.now(datetime.timezone.utc)
        self.doc = {"schema": SCHEMA, "schema_version": SCHEMA_VERSION, "started": started_at.isoformat(timespec="seconds"),
                    "finished": None, "complete": False, "refused": None, "command": cfg.command(self.layout),
                    "stack": {"name": stack.name, "framework": stack.framework, "port": stack.port},
                    "endpoint": cfg.endpoint, "sides": {s: {"env": cfg.env_of(s), "text": env_text(cfg.env_of(s))} for s in SIDES},
                    "settings": cfg.knobs(), "git": machine.git(), "machine": machine.describe(),
                    "loadavg_start": machine.loadavg(), "cpu_layout": self.layout.as_dict(), "limits": limits,
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
            finished = datetime.datetime.now(datetime.timezone.utc)
            self.doc.update(finished=finished.isoformat(timespec="seconds"),
                            duration_s=round((finished - started_at).total_seconds(), 1), loadavg_end=machine.loadavg())
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


def prove(stack: stacks.Stack, endpoint: str, cases: list, said: str) -> str:
    """The endpoint's golden cases, byte for byte with their backend reads (verify's own check);
    Refused when one fails: a configuration that breaks the contract is not measured."""
    target = Target(stack.name, stack.host, stack.port)
    checks = verify.check_cases(target, cases)
    bad = [c for c in checks if not c.ok and not c.skipped]
    if bad:
        raise Refused(f"{said} breaks the contract on /{endpoint}, so it is not measured: "
                      + "; ".join(f"{c.name}: {c.detail}" for c in bad))
    return f"{len(cases)} golden cases of /{endpoint} passed"


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


def _side_cell(s: dict, fmt) -> str:
    if not s["n"]:
        return "–"
    return fmt(s["median"]) + (f" ({fmt(s['min'])}–{fmt(s['max'])})" if s["n"] > 1 else "")


def _verdict_cell(v: dict) -> str:
    if v["word"] == stats.REAL:
        return f"**{stats.REAL}**: B {'better' if v['better'] else 'worse'}"
    return v["word"]


def render_md(doc: dict) -> str:
    """The summary printed on the terminal; it ends with the command that repeats the run."""
    st, m, lay = doc["settings"], doc["machine"], doc["cpu_layout"]
    out = [f"## A/B: {doc['stack']['name']} /{doc['endpoint']}, {st['rounds']} rounds a side (A B A B ...), "
           f"{st['connections']} connections, {st['duration']:g} s each"
           + (f", open loop at {st['open_rate']:,.0f} req/s" if st["open_rate"] else ""), ""]
    for side in SIDES:
        out.append(f"- {side}: `{doc['sides'][side]['text']}`" if doc["sides"][side]["text"] else f"- {side}: the defaults")
    if doc["sides"]["A"]["env"] == doc["sides"]["B"]["env"]:
        out.append("- A and B are the same: this run measures the noise alone")
    out += [f"- {doc['started']}, commit `{(doc['git']['commit'] or '?')[:12]}`{' (uncommitted changes)' if doc['git']['dirty'] else ''}, "
            f"{m['cpu_model']} ({m['cpus']} CPUs), server on CPU {lay['server']}, load generator on {lay['loadgen']}"]
    summary = doc.get("summary")
    if doc.get("refused"):
        out += ["", f"**Refused**: {doc['refused']}"]
    if summary:
        fmts = {key: fmt for key, _, fmt, _ in FIGURES}
        rows = []
        for key, v in summary["figures"].items():
            change = "–" if v["change_pct"] is None else f"{v['change_pct']:+.1f}%"
            rows.append([v["label"], _side_cell(v["a"], fmts[key]), _side_cell(v["b"], fmts[key]), change,
                         _verdict_cell(v)])
        bound = summary["false_positive_bound"]
        out += ["", "Median of each side's rounds (lowest–highest):", "",
                report_md.table(["figure", "A", "B", "B vs A", "verdict"], rows), ""]
        out += [f"- {v['label']}: {v['why']}" for v in summary["figures"].values() if v["word"] != stats.UNKNOWN]
        if bound is not None and min(sum(r["side"] == s for r in doc["rounds"]) for s in SIDES) < stats.MIN_RUNS:
            out.append(f"- no verdict with fewer than {stats.MIN_RUNS} rounds a side: identical sides would look "
                       f"different up to {bound:.0%} of the time")
        elif bound is not None:
            out.append(f"- \"real\" needs every run of one side beyond every run of the other and the medians further "
                       f"apart than either side's spread: identical sides get it for a figure at most {bound:.1%} of "
                       f"the time at this many rounds (more ROUNDS, less)")
        out += [f"- ⚑ {c}" for c in summary["caveats"]]
        out += ["", "Rounds, in the order they ran:", "", report_md.table(
            ["round", "req/s", "CPU µs/req", "closed p99 ms"] + (["open p99 ms"] if st["open_rate"] else [])
            + ["peak RSS MiB", "errors", "steal s", "foreign", "flags"],
            [[f"{r['side']}{r['round']}", report_md.fmt_rps(r["figures"]["throughput_rps"]),
              fmts["cpu_us_per_request"](r["figures"]["cpu_us_per_request"]), report_md.fmt_ms(r["figures"]["p99_ms"])]
             + ([report_md.fmt_ms(r["figures"]["open_p99_ms"])] if st["open_rate"] else [])
             + [report_md.fmt_mib(r["figures"]["peak_rss_bytes"]), f"{r['figures']['errors']:,}",
                f"{r['figures']['steal_s']:.1f}", report_md.fmt_pct(r["figures"]["foreign_cpu_share"]),
                ", ".join(r["flags"]) or "ok"] for r in doc["rounds"]])]
    if not doc.get("complete") and not doc.get("refused"):
        out += ["", "**This run did not complete**: what is above is what it finished."]
    out += ["", "Repeat it with:", "", f"    {doc['command']}", ""]
    return "\n".join(out)


def compact(doc: dict) -> dict:
    """ab.json without raw outputs and per-run accounting: what a stack README cites."""
    keep = ("schema", "schema_version", "started", "command", "stack", "endpoint", "sides", "settings", "git",
            "machine", "cpu_layout", "summary")
    out = {k: doc.get(k) for k in keep}
    out["compact"] = True
    out["settings"] = {k: v for k, v in doc["settings"].items() if k not in ("save", "build")}
    out["rounds"] = [{k: r[k] for k in ("round", "side", "figures", "flags")} for r in doc["rounds"]]
    return out


def save_compact(doc: dict, where: str) -> pathlib.Path:
    path = pathlib.Path(where)
    path = path if path.is_absolute() else ROOT / path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(compact(doc), indent=1, ensure_ascii=False) + "\n")
    return path


def read(path) -> dict:
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / "ab.json"
    doc = json.loads(path.read_text())
    if doc.get("schema") != SCHEMA:
        raise ValueError(f"{path}: not an ab.json of this harness (schema {doc.get('schema')!r})")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version {doc.get('schema_version')}, this harness reads {SCHEMA_VERSION}")
    return doc


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

