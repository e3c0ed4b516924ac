"""The contract's files are consistent, current, and hold what the contract promises."""
import json
import shutil
import subprocess
import sys

from harness import contract
from harness.config import SCHEMA


def test_generated_files_are_current(tmp_path):
    for name in ("generate.py", "greetings.tsv", "cases.json"):
        shutil.copy(SCHEMA / name, tmp_path / name)
    subprocess.run([sys.executable, str(tmp_path / "generate.py")], check=True)
    for name in ("greetings.tsv", "cases.json"):
        assert (tmp_path / name).read_bytes() == (SCHEMA / name).read_bytes(), f"{name} is stale: run generate.py"


def test_greetings_hold_what_the_contract_promises():
    g = contract.greetings()
    assert sorted(g) == list(range(1, 10_001))
    assert all(len(m.encode()) <= 64 and m.isprintable() for m in g.values())
    everything = "".join(g.values())
    for ch in ['"', "\\", "/", "<", ">", "&", "é", "你", "🎉"]:
        assert ch in everything, ch
    assert any(len(c.encode()) == 4 for c in everything), "a 4-byte UTF-8 character"


def test_json_body_equals_a_standard_encoder_without_ascii_escaping():
    # An independent encoder: the contract's bytes are what json.dumps gives with raw UTF-8 output.
    for i, m in contract.greetings().items():
        expected = json.dumps({"id": i, "message": m}, ensure_ascii=False, separators=(",", ":")).encode()
        assert contract.json_body(i, m) == expected


def test_cases_are_well_formed():
    cases = contract.cases()
    assert len({c.name for c in cases}) == len(cases), "case names are unique"
    for c in cases:
        if c.method != "HEAD":
            assert c.headers["content-length"] == str(len(c.body))
        if c.method == "HEAD":
            assert c.body == b""
        elif c.status != 200:
            assert c.body.decode() == contract.generator().ERR[c.status]
        assert set(c.headers) <= {"content-length", "content-type", "allow"}
    assert {c.status for c in cases} == {200, 400, 404, 405}
    for ep in ("redis", "mysql", "memcache"):
        assert any(c.reads == {ep: 1} for c in cases)
