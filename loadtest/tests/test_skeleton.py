"""`make new-stack`: a skeleton that parses, takes a free port, builds, answers /hello with the
contract's bytes, and fails the rest of the contract with messages that say why."""
import shutil

import pytest

from harness import __main__ as cli, contract, ports, skeleton, stacks
from harness.config import ROOT
from harness.contract.checking import Target, case_problems
from harness.docs import check

# Cases the placeholder answers as the contract says; the rest of cases.json is left to the stack.
PLACEHOLDER_CASES = ["hello", "hello HEAD", "hello ignores query", "unknown path", "root", "trailing slash",
                     "case-sensitive path", "unknown path HEAD"]


def existing_stack(root, name, port):
    (root / name).mkdir()
    (root / name / "stack.toml").write_text(f'name = "{name}"\nlanguage = "x"\nframework = "x"\n'
                                            f'port = {port}\nbuild = "true"\nrun = "exec sleep 60"\n')


@pytest.mark.parametrize("name, message", [
    ("", "usage: make new-stack NAME="),
    ("Go_Net", "is not a stack name"),
    ("go--net", "is not a stack name"),
    ("-go", "is not a stack name"),
    ("x" * 41, "is not a stack name"),
    ("taken", "is already a stack"),
    ("notes", "already exists"),
])
def test_bad_or_taken_names_are_refused(tmp_path, name, message):
    existing_stack(tmp_path, "taken", 18100)
    (tmp_path / "notes").mkdir()
    with pytest.raises(skeleton.SkeletonError, match=message):
        skeleton.create(name, root=tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes", "taken"]


def test_the_skeleton_is_a_valid_stack_on_the_next_free_port(tmp_path):
    existing_stack(tmp_path, "one", 18100)
    existing_stack(tmp_path, "two", 18090)
    where, port = skeleton.create("go-nethttp", root=tmp_path)
    assert sorted(p.name for p in where.iterdir()) == [".gitignore", "NOTES.md", "README.md", "server.py", "stack.toml"]
    found = {s.name: s for s in stacks.discover(tmp_path)}  # discover refuses a port claimed twice
    assert found["go-nethttp"].port == port > 18100
    assert not ports.listening(found["go-nethttp"].host, port)
    readme = (where / "README.md").read_text()
    assert readme.startswith("# go-nethttp: ")
    assert "| knob | value | why | measured effect | evidence |" in readme
    # In the shape the docs test holds every stack README to, its links resolving, from the first commit on
    # (the one file outside the stack that it links, as the repository has it).
    (tmp_path / "loadtest" / "docs").mkdir(parents=True)
    shutil.copy(ROOT / "loadtest" / "docs" / "adding-a-stack.md", tmp_path / "loadtest" / "docs")
    found = [p for p in check.check(tmp_path) if p.path.startswith("go-nethttp/")]
    assert not found, "\n".join(map(str, found))


def test_the_next_port_is_above_every_stack_of_this_repository():
    assert skeleton.next_port() > max(s.port for s in stacks.discover())


def test_make_new_stack(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(skeleton, "ROOT", tmp_path)
    monkeypatch.setattr(cli, "stop_like_ctrl_c_on_sigterm", lambda: None)
    assert cli.main(["new-stack", "--name", "Bad_Name"]) == 2
    assert "'Bad_Name' is not a stack name" in capsys.readouterr().err
    assert cli.main(["new-stack", "--name", "demo-x"]) == 0
    assert "make verify STACK=demo-x" in capsys.readouterr().out
    assert (tmp_path / "demo-x" / "stack.toml").exists()
    assert cli.main(["new-stack", "--name", "demo-x"]) == 2
    assert "already a stack" in capsys.readouterr().err


def test_the_placeholder_builds_and_answers_hello_with_the_contracts_bytes(tmp_path):
    existing_stack(tmp_path, "other", 18950)  # a port away from the real stacks', which may be running
    where, _ = skeleton.create("demo-py", root=tmp_path)
    stack = stacks.parse(where / "stack.toml")
    assert stack.availability().reason is None  # python3 >= the manifest's minimum, here
    stacks.build(stack)
    with stacks.start(stack):
        target = Target(stack.name, stack.host, stack.port)
        for name in PLACEHOLDER_CASES:
            case = contract.case(name)
            assert case_problems(target, case, target.fetch(case.method, case.target)) == [], name
        # What is left shows as it will in `make verify`: the status, the headers, the bytes.
        redis = contract.case("redis id=1")
        problems = case_problems(target, redis, target.fetch(redis.method, redis.target))
        assert "status 404, expected 200" in problems
        assert any(p.startswith("bodies differ at byte 0") for p in problems)
        post = contract.case("POST hello")
        problems = case_problems(target, post, target.fetch(post.method, post.target))
        assert "status 501, expected 405" in problems
        assert "header allow missing (expected 'GET, HEAD')" in problems
