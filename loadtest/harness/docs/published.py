"""Published runs: whole runs committed under published/<date>-<machine>/, the newest one quoted by the READMEs."""
import dataclasses
import pathlib
import re
import statistics

from harness.reports import results

DIR = "published"
KEPT = ("results.json", "report.html", "report.md")


@dataclasses.dataclass
class Run:
    path: pathlib.Path  # published/<name>
    doc: dict

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def run_id(self) -> str:
        return self.doc.get("run_id") or self.name

    @property
    def date(self) -> str:
        return self.doc["started"][:10]

    @property
    def commit(self) -> str:
        return self.doc["git"]["commit"][:7] + (" (dirty)" if self.doc["git"].get("dirty") else "")

    @property
    def machine(self) -> str:
        m = self.doc["machine"]
        return f"{m['cpu_model']}, {m['cpus']} CPUs"


def machine_slug(doc: dict) -> str:
    m = doc["machine"]
    words = re.sub(r"[^a-z0-9]+", "-", m["cpu_model"].lower()).strip("-")
    return f"{words}-{m['cpus']}cpu"


def runs(root: pathlib.Path) -> list[Run]:
    """Every published run under root, newest first (by the time it started)."""
    found = []
    for p in sorted((root / DIR).glob("*/results.json")):
        found.append(Run(p.parent, results.read(p)))
    return sorted(found, key=lambda r: r.doc["started"], reverse=True)


def newest(root: pathlib.Path) -> Run | None:
    found = runs(root)
    return found[0] if found else None


def all_runs(doc: dict) -> list[dict]:
    return [r for s in doc.get("stacks", []) for ep in (s.get("endpoints") or {}).values()
            for r in ep["sweep"] + ep["repeats"] + ep["open_loop"]]


def steal(doc: dict) -> tuple[float | None, float | None]:
    """Median and largest hypervisor steal (seconds, all CPUs) over the run's load runs."""
    values = [r["stats"]["steal_s"] for r in all_runs(doc) if (r.get("stats") or {}).get("steal_s") is not None]
    return (statistics.median(values), max(values)) if values else (None, None)
