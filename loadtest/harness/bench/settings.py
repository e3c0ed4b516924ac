"""What a benchmark run does, from the environment (the Makefile passes them through).

Every knob has a default that fits the time budget on a 2-core machine; QUICK=1 swaps in a fast
pass for development. plan.estimate() turns a Settings into seconds, printed before a run starts.
"""
import dataclasses
import os
from dataclasses import asdict, dataclass, field

from harness.bench import profiles
from harness.contract.cases import ENDPOINTS


def _ints(raw: str) -> list[int]:
    return [int(x) for x in raw.replace(" ", "").split(",") if x]


def _floats(raw: str) -> list[float]:
    return [float(x) for x in raw.replace(" ", "").split(",") if x]


@dataclass
class Settings:
    quick: bool = False
    concurrency: list = field(default_factory=lambda: [16, 64, 256, 1024])
    duration: float = 10.0            # seconds per closed-loop level
    repeats: int = 3                  # runs of the headline level (the sweep's best), median reported
    open_rates: list = field(default_factory=lambda: [0.5, 0.8])  # fractions of the measured peak
    open_duration: float = 5.0        # seconds per open-loop rate
    warmup_min: float = 4.0           # seconds of warm-up at least
    warmup_max: float = 60.0          # ... and at most (Tomcat's JIT on one core was still drifting at 30 s)
    warmup_drift: float = 0.05        # warm-up ends when the last 3 one-second rates are within ±5%
    calibration_duration: float = 5.0  # seconds per ceiling measurement
    endpoints: list = field(default_factory=lambda: list(ENDPOINTS))
    stacks: str = ""                  # comma-separated names; empty = every available stack
    calibrate: bool = True
    foreign_max: float = 0.10         # foreign CPU share above which a run is flagged "disturbed"
    generator_max: float = 0.90       # load generator CPU share above which a run is flagged "saturated"
    timeout_s: int = 5                # per-request timeout of the generators (BACKEND_TIMEOUT_MS is 1 s)
    profile_duration: float = 4.0     # seconds per load-profile run
    sweep: bool = True                # the endpoint sweep (off when PROFILE alone is asked for)
    profiles: list = field(default_factory=lambda: list(profiles.DEFAULT))  # load profiles after the sweep

    @classmethod
    def from_env(cls, env=None) -> "Settings":
        env = os.environ if env is None else env
        quick = env.get("QUICK", "") not in ("", "0", "false", "no")
        s = cls.quick_pass() if quick else cls()
        if env.get("CONCURRENCY"):
            s.concurrency = _ints(env["CONCURRENCY"])
        if env.get("DURATION"):
            s.duration = float(env["DURATION"])
        if env.get("REPEATS"):
            s.repeats = max(1, int(env["REPEATS"]))
        if "OPEN_RATES" in env:  # empty = no open-loop runs
            s.open_rates = _floats(env["OPEN_RATES"])
        if env.get("OPEN_DURATION"):
            s.open_duration = float(env["OPEN_DURATION"])
        if env.get("WARMUP_MAX"):
            s.warmup_max = float(env["WARMUP_MAX"])
            s.warmup_min = min(s.warmup_min, s.warmup_max)
        if env.get("ENDPOINT"):
            s.endpoints = [e for e in env["ENDPOINT"].replace(" ", "").split(",") if e]
            unknown = set(s.endpoints) - set(ENDPOINTS)
            if unknown:
                raise SystemExit(f"ENDPOINT: unknown {sorted(unknown)}; choose from {', '.join(ENDPOINTS)}")
        s.stacks = env.get("STACK", "")
        if env.get("PROFILE_DURATION"):
            s.profile_duration = float(env["PROFILE_DURATION"])
        if env.get("PROFILE") or not quick:  # QUICK=1 leaves the profiles out unless PROFILE names them
            s.profiles = profiles.select(env.get("PROFILE"))
        if env.get("PROFILE") and s.profiles and not env.get("ENDPOINT"):
            # `make bench PROFILE=x`: that profile alone; its endpoints are primed and warmed up
            s.sweep, s.calibrate = False, False
            s.endpoints = list(dict.fromkeys(r.endpoint for n in s.profiles for r in profiles.PROFILES[n].runs))
        if env.get("CALIBRATE", "") in ("0", "no", "false"):
            s.calibrate = False
        if env.get("FOREIGN_MAX"):
            s.foreign_max = float(env["FOREIGN_MAX"])
        return s

    @classmethod
    def quick_pass(cls) -> "Settings":
        return cls(quick=True, concurrency=[16, 256], duration=1.0, repeats=1, open_rates=[0.8],
                   open_duration=2.0, warmup_min=1.0, warmup_max=3.0, calibration_duration=1.0, profile_duration=1.0,
                   profiles=[])

    def as_dict(self) -> dict:
        return asdict(self)


def with_port_offset(stacks, env=None) -> list:
    """BENCH_PORT_OFFSET=n runs every stack on its manifest port + n (stacks take PORT from the
    environment), so a benchmark can share a machine with someone running the same stack."""
    env = os.environ if env is None else env
    offset = int(env.get("BENCH_PORT_OFFSET") or 0)
    if not offset:
        return list(stacks)
    return [dataclasses.replace(s, port=s.port + offset) for s in stacks]
