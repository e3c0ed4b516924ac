"""Where things live and what every process is configured with."""
import os
import pathlib
import resource

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "shared-schema"
RUN_DIR = pathlib.Path(os.environ.get("RUN_DIR") or ROOT / ".run").resolve()
LOG_DIR = RUN_DIR / "logs"

SERVICES = ("redis", "mysql", "memcache")


def defaults() -> dict[str, str]:
    out = {}
    for line in (SCHEMA / "defaults.env").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            key, _, value = line.partition("=")
            out[key.strip()] = value.strip()
    return out


def settings() -> dict[str, str]:
    """The contract's defaults, overridden by the caller's environment."""
    return {k: os.environ.get(k, v) for k, v in defaults().items()}


def backend_timeout_s() -> float:
    return int(settings()["BACKEND_TIMEOUT_MS"]) / 1000


def external_services() -> set[str]:
    """Services the caller runs elsewhere (EXTERNAL_SERVICES=redis,mysql or =all): never started or stopped here."""
    raw = os.environ.get("EXTERNAL_SERVICES", "").strip()
    if raw == "all":
        return set(SERVICES)
    names = {n.strip() for n in raw.split(",") if n.strip()}
    unknown = names - set(SERVICES)
    if unknown:
        raise SystemExit(f"EXTERNAL_SERVICES: unknown service(s) {sorted(unknown)}; use {', '.join(SERVICES)} or all")
    return names


def raise_nofile(wanted: int) -> int:
    """Raise this process's soft descriptor limit towards the hard one; the stacks it starts inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard == resource.RLIM_INFINITY else min(hard, max(wanted, soft))
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]
