"""The seeds' answers are generated from committed results, never typed: each kind of evidence is
read from its file, and missing evidence says so."""
import json
import pathlib
import shutil

from harness.bench import profiles
from harness.docs import figures, published, seeds

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIX = pathlib.Path(__file__).with_name("fixtures")


def test_an_ab_answer_is_read_from_its_file_and_a_missing_one_says_so(tmp_path):
    (tmp_path / "s" / "tuning").mkdir(parents=True)
    shutil.copy(ROOT / "java-tomcat" / "tuning" / "hikari-pool.json", tmp_path / "s" / "tuning" / "x.json")
    readme = tmp_path / "README.md"
    got = seeds.ab_answer(tmp_path, readme, seeds.Ab("s/tuning/x.json", "B against A"))
    doc = json.loads((tmp_path / "s" / "tuning" / "x.json").read_text())
    rps = doc["summary"]["figures"]["throughput_rps"]
    assert f"×{rps['b']['median'] / rps['a']['median']:.2f}" in got and "(s/tuning/x.json)" in got
    assert seeds.ab_answer(tmp_path, readme, seeds.Ab("s/tuning/none.json", "B against A")).endswith("not measured yet")


def test_a_pair_and_the_churn_profile_come_from_the_newest_published_run(tmp_path):
    doc = json.loads((FIX / "results-three-stacks.json").read_text())
    run = published.Run(tmp_path / "published" / "r", doc)
    names = [s["name"] for s in doc["stacks"] if s.get("endpoints")]
    got = seeds.pair_answer(tmp_path / "README.md", run, seeds.Pair(names[0], names[1], ("hello",)))
    a, b = ([s for s in doc["stacks"] if s["name"] == n][0]["endpoints"]["hello"] for n in names[:2])
    ratio = a["headline"]["throughput_rps"]["median"] / b["headline"]["throughput_rps"]["median"]
    assert f"/hello ×{ratio:.2f}" in got
    assert "not in a published run yet" in seeds.churn_answer(tmp_path / "README.md", run, seeds.Churn((names[0],)))


def test_the_top_readme_has_a_row_per_seed_and_its_block_is_current():
    text = (ROOT / "README.md").read_text()
    body = text.split(seeds.BEGIN)[1].split(seeds.END)[0]
    assert [line.split("|")[1].strip() for line in body.splitlines() if line.startswith("| 00")] == \
        ["000", "001", "002", "003", "004"]
    assert body.strip("\n") == figures.expected(ROOT, ROOT / "README.md", "seeds", published.runs(ROOT))


def test_the_churn_answer_gives_each_stacks_connections_per_second_in_client_order(tmp_path):
    doc = json.loads((FIX / "results-three-stacks.json").read_text())
    stack = [s for s in doc["stacks"] if s.get("endpoints")][0]
    runs = profiles.PROFILES["churn"].runs
    recs = [{"profile_run": r.label, "connections_per_s": 1000.0 * (i + 1), "errors": {"read": i}, "flags": []}
            for i, r in enumerate(runs)]
    recs[1]["flags"] = ["kept-alive"]
    stack["profiles"] = {"churn": {"about": "", "runs": list(reversed(recs))}}  # order comes from the profile
    got = seeds.churn_answer(tmp_path / "README.md", published.Run(tmp_path / "published" / "r", doc),
                             seeds.Churn((stack["name"],)))
    once = [r for r in runs if r.shape.close_every == 1]
    assert f"at {' / '.join(str(r.connections) for r in once)} clients" in got
    assert f"{stack['name']} 1,000 / 2,000 / 3,000, errors 3 ⚑ kept-alive" in got  # the close-every-10 run left out
