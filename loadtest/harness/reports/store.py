"""The one way a run's JSON documents (results.json, ab.json, a soak's results.json) reach the disk
and come back: written whole or not at all, read back only when they are the document asked for."""
import json
import os
import pathlib


def write(doc: dict, path: pathlib.Path) -> pathlib.Path:
    """Atomically: a reader never sees half a file, a crash leaves the previous one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
    os.replace(tmp, path)
    return path


def read(path, name: str, schema: str, version: int, what: str) -> dict:
    """`path`: the document, or the directory holding it as `name`; `what` names it in errors."""
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / name
    doc = json.loads(path.read_text())
    if doc.get("schema") != schema:
        raise ValueError(f"{path}: not {what} (schema {doc.get('schema')!r})")
    if doc.get("schema_version") != version:
        raise ValueError(f"{path}: schema_version {doc.get('schema_version')}, this harness reads {version}")
    return doc
