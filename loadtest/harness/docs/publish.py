"""`make publish RUN=results/<id>`: a whole run committed under published/<date>-<machine>/, and every
README's figure block generated again from the newest published run."""
import json
import os
import pathlib

from harness.docs import figures, published
from harness.reports import report_html, report_md, results


class Refused(Exception):
    pass


def target_dir(root: pathlib.Path, doc: dict, run_id: str) -> pathlib.Path:
    """published/<date>-<machine>; a second run of the same day and machine gets its start time too."""
    base = root / published.DIR
    name = f"{doc['started'][:10]}-{published.machine_slug(doc)}"
    for candidate in (name, f"{doc['started'][:10]}T{doc['started'][11:16].replace(':', '')}-{published.machine_slug(doc)}"):
        d = base / candidate
        if not (d / "results.json").exists():
            return d
        if results.read(d).get("run_id", d.name) == run_id:
            return d  # the same run again: refreshed in place
    raise Refused(f"{base / name} and its timed variant already hold other runs")


def publish(root: pathlib.Path, run_dir: pathlib.Path) -> pathlib.Path:
    run_dir = run_dir.resolve()  # results/latest is a link to the run's own directory
    doc = results.read(run_dir)
    if not doc.get("complete"):
        raise Refused(f"{run_dir}: the run did not complete; publish a whole run")
    if doc["settings"].get("quick"):
        raise Refused(f"{run_dir}: a QUICK pass is not comparable with whole runs; publish a whole `make bench-all`")
    if doc["settings"].get("stacks"):
        raise Refused(f"{run_dir}: a run of some stacks only ({', '.join(doc['settings']['stacks'])}); "
                      "publish a whole `make bench-all`")
    run_id = doc.get("run_id") or run_dir.name
    doc["run_id"] = run_id  # runs recorded before results.json carried it: the directory's name is the id
    local = local_paths(run_dir, run_id)
    doc = json.loads(without_local_paths(json.dumps(doc), local))
    out = target_dir(root, doc, run_id)
    out.mkdir(parents=True, exist_ok=True)
    results.write(doc, out)
    # The reports are rendered again by this harness, so the published ones read the way the docs do.
    (out / "report.md").write_text(report_md.render(doc))
    (out / "report.html").write_text(report_html.render(doc))
    for sub in ("raw", "scripts"):
        for f in sorted((run_dir / sub).rglob("*")) if (run_dir / sub).is_dir() else []:
            if f.is_file():
                dest = out / f.relative_to(run_dir)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_bytes(without_local_paths(f.read_bytes().decode("utf-8", "surrogateescape"), local)
                                 .encode("utf-8", "surrogateescape"))
    return out


def local_paths(run_dir: pathlib.Path, run_id: str) -> list[tuple[str, str]]:
    """The paths of the machine that ran it, as the commands recorded them, and what a reader of the
    repository reads instead: the run's directory, the checkout it ran from, the home directory."""
    out = [(str(run_dir), f"results/{run_id}")]
    if run_dir.parent.name == "results":
        out.append((str(run_dir.parent.parent) + "/", ""))
    home = os.path.expanduser("~")
    if home not in ("", "/"):
        out.append((home + "/", "~/"))
    return out


def without_local_paths(text: str, local: list[tuple[str, str]]) -> str:
    for path, instead in local:
        text = text.replace(path, instead)
    return text


def main(root: pathlib.Path, run: str | None) -> int:
    import sys
    if run:
        try:
            out = publish(root, pathlib.Path(run))
        except (Refused, FileNotFoundError, ValueError) as e:
            print(f"publish: {e}", file=sys.stderr)
            return 2
        print(f"publish: {out}")
    for p in figures.regenerate(root):
        print(f"publish: regenerated the figures of {p.relative_to(root)}")
    return 0
