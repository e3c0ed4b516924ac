"""What a soak does, from the environment: stack, endpoint, rate (or the peak it is a fraction of), windows, thresholds."""
import json
import os
import pathlib
import shlex
from dataclasses import asdict, dataclass, field

from harness.accounting import cpus
from harness.bench import calibrate, knobs
from harness.bench.settings import Settings
from harness.soak import verdicts as soak_verdicts

DEFAULT_CONNECTIONS = 64      # when no benchmark says where the stack's knee is
PEAK_PROBE_S = 10.0           # the closed-loop run that measures the peak when no results.json has it

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
    """`base` with every threshold `env` sets (LEAK_MIB_PER_H=...) over it; knobs.Usage on a bad value."""
    th = soak_verdicts.Thresholds(**base.as_dict())
    for key, name, low in THRESHOLD_KNOBS:
        setattr(th, key, knobs.number(env, name, float, getattr(th, key), low))
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
        stack, endpoint = knobs.one_stack_and_endpoint(env)
        s = cls(stack, endpoint, knobs.parse_env(env.get("STACK_ENV", ""), "STACK_ENV"))
        s.rate = knobs.number(env, "RATE", float, None, 1.0)
        s.rate_fraction = knobs.number(env, "RATE_FRACTION", float, s.rate_fraction, 0.01)
        s.window = knobs.number(env, "WINDOW", int, s.window, 1)
        s.duration = knobs.number(env, "DURATION", float, s.duration, 3.0 * s.window)
        s.connections = knobs.number(env, "CONNECTIONS", int, None, 1)
        s.warmup_max = knobs.number(env, "WARMUP_MAX", float, s.warmup_max, 0.0)
        s.warmup_min = min(s.warmup_min, s.warmup_max)
        s.timeout_s = knobs.number(env, "TIMEOUT", int, s.timeout_s, 1)
        s.foreign_max = knobs.number(env, "FOREIGN_MAX", float, s.foreign_max, 0.0)
        s.progress_s = knobs.number(env, "PROGRESS", float, s.progress_s, 1.0)
        s.build = (env.get("BUILD") or "").strip() not in ("0", "no", "false")
        s.thresholds = thresholds_from(env, s.thresholds)
        if s.rate_fraction > 1:
            raise knobs.Usage(f"RATE_FRACTION={s.rate_fraction:g}: a fraction of the peak, at most 1")
        if s.rate and s.connections and too_few_connections(endpoint, s.rate, s.connections):
            raise knobs.Usage(too_few_connections(endpoint, s.rate, s.connections))
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
            words.append("STACK_ENV=" + shlex.quote(knobs.env_text(self.env)))
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
