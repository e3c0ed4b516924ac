"""`make compare` on recorded results with known changes (fixtures/README.md says how they were
made): regressions first, only changes beyond both runs' spreads judged, what differs named first."""
import copy
import json
import pathlib
import re
import shutil

import pytest
from abdocs import ab_doc, ab_round

from harness import compare
from harness.accounting import stats

FIX = pathlib.Path(__file__).with_name("fixtures")


def runs(tmp_path, old_doc=None, new_doc=None):
    """OLD and NEW as run directories (results.json in each), from the fixtures or from docs given."""
    out = []
    tmp_path.mkdir(parents=True, exist_ok=True)
    for name, fixture, doc in (("old", "results-repeats.json", old_doc), ("new", "results-changed.json", new_doc)):
        (tmp_path / name).mkdir()
        if doc is None:
            shutil.copy(FIX / fixture, tmp_path / name / "results.json")
        else:
            (tmp_path / name / ("ab.json" if doc["schema"].endswith("/ab") else "results.json")).write_text(json.dumps(doc))
        out.append(tmp_path / name)
    return out


def rows_by_label(result):
    return {r.label: r for r in result["rows"]}


def test_known_changes_are_found_and_ordered_regressions_first(tmp_path):
    old, new = (compare.load(p) for p in runs(tmp_path))
    result = compare.compare(old, new)
    rows = rows_by_label(result)
    hello = rows["node-cluster /hello closed loop, 256 conns"]
    assert hello.status == "regression"
    assert hello.figures["throughput_rps"]["word"] == stats.REAL and hello.figures["throughput_rps"]["better"] is False
    assert hello.figures["throughput_rps"]["change_pct"] == pytest.approx(-30, abs=0.1)
    assert hello.figures["cpu_us_per_request"]["better"] is False
    assert hello.figures["p99_ms"]["word"] == stats.NOISE  # unchanged: not flagged
    redis = rows["node-cluster /redis closed loop, 256 conns"]
    assert redis.status == "improvement" and redis.figures["throughput_rps"]["change_pct"] == pytest.approx(25, abs=0.1)
    # +0.5% inside the runs' own ~2.6% spread: not a change
    assert rows["node-cluster /mysql closed loop, 256 conns"].status == "noise"
    # +50%, but measured once in each run: shown, never judged
    once = rows["node-cluster /memcache closed loop, 256 conns"]
    assert once.status == "unjudged" and once.figures["throughput_rps"]["word"] == stats.UNKNOWN
    statuses = [r.status for r in result["rows"]]
    assert statuses == sorted(statuses, key=compare.ORDER.index)
    unjudged = [r for r in result["rows"] if r.status == "unjudged"]
    assert unjudged[0] is once  # the biggest unjudged change first
    # the same level in both runs: no separate "best level" row
    assert not any("best closed-loop level" in label for label in rows)


def test_the_markdown_names_what_differs_before_any_number(tmp_path):
    old, new = (compare.load(p) for p in runs(tmp_path))
    md = compare.render_md(old, new, compare.compare(old, new))
    head = md.split("## ")[0]
    assert "commit 111111111111 → 222222222222" in head
    assert "machine kernel: '6.18.44-fc-v595' → '6.18.50-fc-v600'" in head
    assert "ACROSS MACHINES" not in head
    assert md.index("## Regressions (1)") < md.index("## Improvements (1)") < md.index("## Within the noise")
    assert "| node-cluster /hello closed loop, 256 conns | 1,123 → 786 -30.0% ▼ |" in md


def test_runs_from_different_machines_say_so_at_the_top(tmp_path):
    new = json.loads((FIX / "results-changed.json").read_text())
    new["machine"].update(hostname="other-box", cpu_model="Intel Xeon", cpus=8)
    old, new = (compare.load(p) for p in runs(tmp_path, new_doc=new))
    result = compare.compare(old, new)
    assert result["across_machines"]
    head = compare.render_md(old, new, result).split("## ")[0]
    assert "ACROSS MACHINES" in head and "machine cpus: 2 → 8" in head and "'AMD EPYC' → 'Intel Xeon'" in head


def test_a_quick_pass_says_so_at_the_top(tmp_path):
    docs = [json.loads((FIX / name).read_text()) for name in ("results-repeats.json", "results-changed.json")]
    for quick_old, quick_new, said in [(False, True, "QUICK PASS (NEW): "), (True, True, "QUICK PASS (OLD and NEW): "),
                                       (False, False, None)]:
        docs[0]["settings"]["quick"], docs[1]["settings"]["quick"] = quick_old, quick_new
        where = tmp_path / f"{quick_old}-{quick_new}"
        old, new = (compare.load(p) for p in runs(where, old_doc=docs[0], new_doc=docs[1]))
        head = compare.render_md(old, new, compare.compare(old, new)).split("## ")[0]
        if said:
            assert said + "QUICK pass: not comparable with whole runs" in head
        else:
            assert "QUICK PASS" not in head


def test_a_run_without_repeats_is_compared_but_never_judged(tmp_path):
    sample = json.loads((FIX / "results-sample.json").read_text())
    old, new = (compare.load(p) for p in runs(tmp_path, old_doc=sample))
    result = compare.compare(old, new)
    assert {r.status for r in result["rows"]} == {"unjudged"}
    assert "settings repeats: 1 → 3" in result["differences"]


def test_a_best_level_that_moved_gets_its_own_row(tmp_path):
    new = json.loads((FIX / "results-changed.json").read_text())
    ep = new["stacks"][0]["endpoints"]["memcache"]
    at_256 = next(r for r in ep["sweep"] if r["connections"] == 256)
    ep["headline"]["connections"] = 256
    ep["repeats"] = [dict(copy.deepcopy(at_256), throughput_rps=at_256["throughput_rps"] * k) for k in (0.99, 1.01)]
    old, new = (compare.load(p) for p in runs(tmp_path, new_doc=new))
    rows = rows_by_label(compare.compare(old, new))
    best = rows["node-cluster /memcache best closed-loop level (16 conns → 256 conns)"]
    # Judged, best level against best level: the same rate within the spreads (669 -> 652 req/s), but
    # at 16 times the connections the CPU per request and the p99 rose beyond them: a regression.
    rps = best.figures["throughput_rps"]
    assert (rps["a"]["median"], rps["b"]["median"]) == (669.0, 652.0) and rps["word"] == stats.NOISE
    assert best.figures["cpu_us_per_request"]["word"] == stats.REAL and best.figures["cpu_us_per_request"]["better"] is False
    assert best.figures["p99_ms"]["word"] == stats.REAL and best.figures["p99_ms"]["better"] is False
    assert best.status == "regression"


def test_two_ab_runs_compare_side_by_side(tmp_path):
    def doc(b_rps):
        rounds = [ab_round(s, i, 20000 + 100 * i if s == "A" else b_rps + 50 * i, 50.0, 3.0, 100 << 20)
                  for i in (1, 2, 3) for s in "AB"]
        return ab_doc(rounds)
    old, new = (compare.load(p) for p in runs(tmp_path, doc(12000), doc(15000)))
    rows = rows_by_label(compare.compare(old, new))
    assert rows["node-cluster /hello side A (the defaults), 64 conns"].status == "noise"
    assert rows["node-cluster /hello side B (WORKERS=1), 64 conns"].status == "improvement"


def test_unlike_runs_and_missing_paths_are_refused_plainly(tmp_path, capsys):
    old, _ = runs(tmp_path)
    (tmp_path / "ab").mkdir()
    (tmp_path / "ab" / "ab.json").write_text(json.dumps(ab_doc([])))
    assert compare.main(str(old), str(tmp_path / "ab")) == 2
    assert "compare like with like" in capsys.readouterr().err
    assert compare.main(str(old), str(tmp_path / "nowhere")) == 2
    assert "no such file or directory" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert compare.main(str(old), str(tmp_path / "empty")) == 2
    assert "neither a results.json" in capsys.readouterr().err
    assert compare.main("", str(old)) == 2


def test_the_html_page_is_written_next_to_new_and_is_self_contained(tmp_path, capsys):
    old, new = runs(tmp_path)
    assert compare.main(str(old), str(new)) == 0
    assert "## Regressions (1)" in capsys.readouterr().out
    html = (new / "compare.html").read_text()
    assert "<h2>Regressions (1)</h2>" in html and "class='regression'" in html and "class='improvement'" in html
    assert not re.search(r'(src|href)=["\']?https?:', html) and "<script" not in html and "<link" not in html
    assert compare.main(str(old), str(new), str(tmp_path / "elsewhere.html")) == 0
    assert (tmp_path / "elsewhere.html").exists()
