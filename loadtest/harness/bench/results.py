"""results.json: writing, reading, and the few derived numbers every report shows.

The schema is documented in loadtest/RESULTS.md; SCHEMA_VERSION changes whenever a field changes
meaning or disappears (adding a field does not).
"""
import json
import os
import pathlib

SCHEMA = "reference-servers/bench-results"
SCHEMA_VERSION = 1
KNEE_FRACTION = 0.9


def knee(points: list[tuple[int, float]]) -> int | None:
    """The knee of throughput vs concurrency: the fewest connections reaching 90% of the peak.
    Past it, more connections buy little throughput and mostly add latency (queueing)."""
    points = [(c, t) for c, t in points if t is not None]
    if not points:
        return None
    peak = max(t for _, t in points)
    return min(c for c, t in points if t >= KNEE_FRACTION * peak)


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
        raise ValueError(f"{path}: not a results.json of this harness (schema {doc.get('schema')!r})")
    if doc.get("schema_version") != SCHEMA_VERSION:
        raise ValueError(f"{path}: schema_version {doc.get('schema_version')}, this harness reads {SCHEMA_VERSION}")
    return doc


def link_latest(results_root: pathlib.Path, run_dir: pathlib.Path) -> None:
    latest = results_root / "latest"
    tmp = results_root / ".latest.tmp"
    if tmp.is_symlink() or tmp.exists():
        tmp.unlink()
    tmp.symlink_to(run_dir.name)
    os.replace(tmp, latest)


def ceiling_for(doc: dict, endpoint: str, connections: int) -> float | None:
    for c in doc.get("ceilings", []):
        if c["endpoint"] == endpoint and c["connections"] == connections:
            return c.get("throughput_rps")
    return None


def ratio(value, ceiling) -> float | None:
    if value is None or not ceiling:
        return None
    return round(value / ceiling, 3)
