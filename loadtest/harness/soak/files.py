"""A soak's results.json and its reports: written, read, recognised, rendered again."""
import json
import pathlib

from harness.reports import store
from harness.soak import report as soak_report
from harness.soak.conclusions import rejudge

SCHEMA = "reference-servers/soak"
SCHEMA_VERSION = 1


def write(doc: dict, out_dir: pathlib.Path) -> pathlib.Path:
    return store.write(doc, out_dir / "results.json")


def read(path) -> dict:
    return store.read(path, "results.json", SCHEMA, SCHEMA_VERSION, "a soak's results.json")


def report_again(out_dir: pathlib.Path, env=None, say=print) -> pathlib.Path:
    """`make report RESULTS=results/soak-<...>`: the verdicts drawn again (rejudge), results.json
    rewritten with them, then the reports."""
    doc = read(out_dir)
    done = rejudge(doc, out_dir, env)
    if done is not None:
        write(doc, out_dir)
        th = doc["verdicts"]["thresholds"]
        said = ", ".join(f"{k} {v:g}" for k, v in th.items())
        was = " ".join(done["flags_before"]) or "none"
        now = " ".join(done["flags"]) or "none"
        say(f"soak: verdicts drawn again from the {len(doc['windows'])} stored windows with this harness "
            f"(commit {(done['git'].get('commit') or '?')[:12]}; thresholds: {said}): flags {was} -> {now}"
            + ("" if done["flags_as_run"] == done["flags_before"] else
               f" (as the soak ran: {' '.join(done['flags_as_run']) or 'none'})"))
    return render(out_dir, doc)


def is_soak(path) -> bool:
    path = pathlib.Path(path)
    path = path / "results.json" if path.is_dir() else path
    try:
        return json.loads(path.read_text()).get("schema") == SCHEMA
    except (OSError, ValueError):
        return False


def results_dir(path) -> pathlib.Path:
    path = pathlib.Path(path)
    return path if path.is_dir() else path.parent


def render(out_dir: pathlib.Path, doc: dict | None = None) -> pathlib.Path:
    doc = read(out_dir) if doc is None else doc
    (out_dir / "report.md").write_text(soak_report.render_md(doc))
    (out_dir / "report.html").write_text(soak_report.render_html(doc))
    return out_dir
