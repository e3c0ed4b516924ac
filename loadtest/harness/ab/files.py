"""ab.json: its schema, reading it, and the compact copy a stack README cites (SAVE=)."""
import pathlib

from harness.config import ROOT
from harness.reports import store

SCHEMA = "reference-servers/ab"


SCHEMA_VERSION = 1


SIDES = ("A", "B")


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
    return store.write(compact(doc), path)


def read(path) -> dict:
    return store.read(path, "ab.json", SCHEMA, SCHEMA_VERSION, "an ab.json of this harness")
