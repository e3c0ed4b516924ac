"""Rendering the reports from a recorded results.json: every section present, and the HTML self-contained."""
import json
import pathlib
import re
import shutil

from harness.bench import report_md, results, run

FIX = pathlib.Path(__file__).with_name("fixtures")


def test_reports_render_from_a_recorded_results_json(tmp_path):
    shutil.copy(FIX / "results-sample.json", tmp_path / "results.json")
    run.render(tmp_path)
    md = (tmp_path / "report.md").read_text()
    html = (tmp_path / "report.html").read_text()
    doc = results.read(tmp_path)
    for endpoint in doc["settings"]["endpoints"]:
        assert f"## /{endpoint}" in md and f"<h2>/{endpoint}</h2>" in html
    assert "of ceiling" in md and "knee" in md
    assert html.count("<svg") >= 4
    # self-contained: nothing fetched from anywhere when opened offline
    assert not re.search(r'(src|href)=["\']?https?:', html)
    assert "<script" not in html and "<link" not in html
    for stack in doc["stacks"]:
        assert stack["name"] in html
    # each benchmarked stack has its own table, every endpoint in it (what its README quotes)
    per_stack = md.split("## Per stack")[1].split("## Ceilings")[0]
    for stack in report_md.benchmarked(doc):
        section = per_stack.split(f"### {stack['name']}\n")[1].split("###")[0]
        for endpoint in stack["endpoints"]:
            assert f"| /{endpoint} |" in section


def test_an_unavailable_or_failed_stack_is_listed_with_its_reason(tmp_path):
    doc = json.loads((FIX / "results-sample.json").read_text())
    doc["stacks"].append({"name": "php-swoole", "status": "unavailable", "reason": "ext-swoole not loaded"})
    doc["stacks"].append({"name": "broken", "status": "failed", "reason": "verification: golden responses: 3 of 70 failed"})
    md = report_md.render(doc)
    assert "| php-swoole | unavailable | ext-swoole not loaded |" in md
    assert "| broken | failed | verification: golden responses" in md
    assert "php-swoole" in report_md.summary_table(doc)


def test_a_results_json_of_another_schema_version_is_refused(tmp_path):
    doc = json.loads((FIX / "results-sample.json").read_text())
    doc["schema_version"] = 999
    (tmp_path / "results.json").write_text(json.dumps(doc))
    import pytest
    with pytest.raises(ValueError, match="schema_version 999"):
        results.read(tmp_path)
