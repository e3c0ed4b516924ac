"""The docs test: this checkout's Markdown keeps its budgets, shape, links and generated figures; and each rule,
on a small tree that breaks exactly that rule, is caught (so that none of them can pass by not looking)."""
import json
import pathlib
import shutil

import pytest

from harness.config import ROOT
from harness.docs import check, figures, publish, published

FIX = pathlib.Path(__file__).parent / "fixtures"
TRACKER_WORD = "iss" + "ue"  # spelled apart so that this file names no tracker number itself

SECTIONS = {
    "Versions": "| piece | library | version | why |\n|---|---|---|---|\n| server | demo | 1.0 | newest |",
    "Run": "make run STACK=demo",
    "Code map": "| file | what |\n|---|---|\n| server.py | routes |",
    "How a request flows": "One process.",
    "Tuning": ("| knob | value | why | measured effect | evidence |\n|---|---|---|---|---|\n"
               "| `WORKERS` | 1 | one core | +3 % req/s, within noise | [knob.json](tuning/knob.json) |\n"
               "| `BACKLOG` | 511 | the kernel caps it | none | not re-measured: a limit, not a speed knob |"),
    "Protocol hygiene": "| rule | how |\n|---|---|\n| 431 | server.py:3 |",
    "Workarounds": "None.",
    "Benchmark-only settings": "None.",
    "Figures": f"From the newest published run.\n\n{figures.BEGIN}\n{figures.END}",
    "Limits": "- slow, see [NOTES](NOTES.md#2026-11-28-demo-is-slow-at-100-).",
}


def stack_readme(sections: dict = SECTIONS) -> str:
    return "# demo: Demo 1.0\n\nA demo.\n\n" + "\n\n".join(f"## {k}\n\n{v}" for k, v in sections.items()) + "\n"


def whole_run(tmp_path: pathlib.Path) -> pathlib.Path:
    """A finished whole run in results/, from the fixture of three stacks (a QUICK pass, made whole here)."""
    doc = json.loads((FIX / "results-three-stacks.json").read_text())
    doc["complete"], doc["settings"]["quick"], doc["settings"]["stacks"] = True, False, ""
    doc["stacks"][0]["name"] = "demo"
    run_dir = tmp_path / "results" / "20261128T010203Z"
    run_dir.mkdir(parents=True)
    (run_dir / "results.json").write_text(json.dumps(doc))
    return run_dir


@pytest.fixture
def tree(tmp_path) -> pathlib.Path:
    root = tmp_path / "repo"
    (root / "demo" / "tuning").mkdir(parents=True)
    (root / "demo" / "stack.toml").write_text('name = "demo"\n')
    (root / "demo" / "README.md").write_text(stack_readme())
    (root / "demo" / "NOTES.md").write_text("# demo: notes\n\n## 2026-11-28: demo is slow at 100 %\n\nCommit: x\n")
    (root / "demo" / "tuning" / "knob.json").write_text("{}")
    (root / "demo" / "server.py").write_text("print('hello')  # the contract's 431\n")
    (root / "README.md").write_text(f"# Top\n\nSee [demo](demo/README.md#tuning).\n\n{figures.BEGIN}\n{figures.END}\n")
    (root / "published").mkdir()
    (root / "published" / "README.md").write_text(f"# Published runs\n\n{figures.INDEX_BEGIN}\n{figures.INDEX_END}\n")
    publish.publish(root, whole_run(tmp_path))
    figures.regenerate(root)
    return root


def problems(root, rule=None):
    found = check.check(root)
    return [p for p in found if rule is None or p.rule == rule], found


def only(root, rule: str) -> check.Problem:
    found = check.check(root)
    assert [p.rule for p in found] == [rule], "\n".join(map(str, found))
    return found[0]


def test_this_checkout_passes_the_docs_test():
    found = check.check(ROOT)
    assert not found, "\n".join(map(str, found))


def test_a_tree_in_the_shape_passes(tree):
    assert check.check(tree) == []
    block = (tree / "demo" / "README.md").read_text()
    assert "| /hello |" in block and "20261128T010203Z" in block  # the stack's own rows, the run named


def test_a_stack_readme_over_its_budget(tree):
    readme = tree / "demo" / "README.md"
    readme.write_text(readme.read_text() + "\n" + "padding " * 2600 + "\n")
    assert "over the stack README's" in only(tree, "budget").message


def test_the_top_readme_over_its_budget(tree):
    readme = tree / "README.md"
    readme.write_text(readme.read_text() + "\n" + "padding " * 2100 + "\n")
    assert only(tree, "budget").path == "README.md"


def test_a_missing_section(tree):
    sections = {k: v for k, v in SECTIONS.items() if k != "Workarounds"}
    (tree / "demo" / "README.md").write_text(stack_readme(sections))
    figures.regenerate(tree)
    assert "'## Workarounds' is missing" in only(tree, "shape").message


def test_a_section_out_of_order(tree):
    keys = list(SECTIONS)
    keys[2], keys[4] = keys[4], keys[2]  # Tuning before Code map
    (tree / "demo" / "README.md").write_text(stack_readme({k: SECTIONS[k] for k in keys}))
    figures.regenerate(tree)
    p = only(tree, "shape")
    assert "out of order" in p.message and "Tuning" in p.message


def test_a_tuning_row_without_evidence(tree):
    readme = tree / "demo" / "README.md"
    readme.write_text(readme.read_text().replace("| not re-measured: a limit, not a speed knob |", "| measured by hand |"))
    assert "`BACKLOG`" in only(tree, "tuning").message


def test_a_link_to_no_file_and_to_no_heading(tree):
    notes = tree / "demo" / "NOTES.md"
    notes.write_text(notes.read_text() + "\nSee [the code](server.js).\n")
    assert "no such file" in only(tree, "link").message
    notes.write_text(notes.read_text().replace("(server.js)", "(README.md#no-such-section)"))
    assert "no heading gives" in only(tree, "link").message


def test_a_reference_style_link_to_no_file(tree):
    notes = tree / "demo" / "NOTES.md"
    notes.write_text(notes.read_text() + "\nSee [the code][code].\n\n[code]: server.js\n")
    assert "server.js: no such file" in only(tree, "link").message


def test_a_figure_typed_by_hand(tree):
    readme = tree / "demo" / "README.md"
    text = readme.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| /hello |")]
    readme.write_text(text.replace(rows[0], rows[0].replace("| /hello | ", "| /hello | 1", 1)))
    assert only(tree, "figures").path == "demo/README.md"


def test_a_published_run_newer_than_the_figures(tree, tmp_path):
    run = whole_run(tmp_path / "second")
    doc = json.loads((run / "results.json").read_text())
    doc["started"] = "2026-11-29T01:02:03+00:00"
    (run / "results.json").write_text(json.dumps(doc))
    publish.publish(tree, run)  # without regenerating the READMEs
    assert {p.rule for p in check.check(tree)} == {"figures"}
    figures.regenerate(tree)
    assert check.check(tree) == []
    assert "2026-11-29" in (tree / "README.md").read_text()


def test_a_tracker_number(tree):
    code = tree / "demo" / "server.py"
    code.write_text(code.read_text() + f"# see {TRACKER_WORD} 17\n")
    p = only(tree, "tracker")
    assert p.path == "demo/server.py" and p.line == 2
    code.write_text("# upstream: https://github.com/org/repo/" + TRACKER_WORD + "s/17 is fine\n")
    assert check.check(tree) == []


@pytest.mark.parametrize("heading, anchor", [
    ("2026-11-27: /redis at 70 %", "2026-11-27-redis-at-70-"),
    ("`/hello` against TechEmpower's netty", "hello-against-techempowers-netty"),
    ("Tuning", "tuning"),
    ("A [link](x.md) in it", "a-link-in-it"),
])
def test_anchors_are_githubs(heading, anchor):
    assert check.slug(heading) == anchor


def test_publish_refuses_a_quick_pass_a_slice_and_an_unfinished_run(tree, tmp_path):
    for change, words in [(lambda d: d["settings"].update(quick=True), "QUICK"),
                          (lambda d: d["settings"].update(stacks="demo"), "some stacks"),
                          (lambda d: d.update(complete=False), "did not complete")]:
        run = whole_run(tmp_path / words.replace(" ", "-"))
        doc = json.loads((run / "results.json").read_text())
        change(doc)
        (run / "results.json").write_text(json.dumps(doc))
        with pytest.raises(publish.Refused, match=words):
            publish.publish(tree, run)


def test_publish_keeps_no_path_of_the_machine_that_ran_it(tree, tmp_path):
    run = whole_run(tmp_path / "paths")
    checkout = run.parent.parent
    doc = json.loads((run / "results.json").read_text())
    doc["ceilings"][0]["method"] = f"sysbench {checkout}/loadtest/harness/bench/sysbench_select.lua"
    (run / "results.json").write_text(json.dumps(doc))
    (run / "raw").mkdir()
    (run / "raw" / "hello.txt").write_text(f"$ wrk -s {run}/scripts/wrk-hello.lua\n$ {pathlib.Path.home()}/.cargo/bin/oha\n")
    out = publish.publish(tree, run)
    text = "".join(p.read_text() for p in out.rglob("*") if p.is_file())
    assert str(tmp_path) not in text and str(pathlib.Path.home()) + "/" not in text
    assert "sysbench loadtest/harness/bench/sysbench_select.lua" in (out / "results.json").read_text()
    assert (out / "raw" / "hello.txt").read_text() == \
        "$ wrk -s results/20261128T010203Z/scripts/wrk-hello.lua\n$ ~/.cargo/bin/oha\n"


def test_publish_twice_refreshes_the_same_directory(tree, tmp_path):
    before = sorted(p.name for p in (tree / "published").iterdir())
    publish.publish(tree, whole_run(tmp_path / "again"))
    assert sorted(p.name for p in (tree / "published").iterdir()) == before
    (run,) = published.runs(tree)
    assert run.run_id == "20261128T010203Z" and (run.path / "report.html").exists()
