"""Discovery and manifests: a contributor's mistake gets a clear message."""
import pytest

from harness import stacks

GOOD = '''
name = "demo"
language = "Python"
framework = "none"
port = 19999
build = "true"
run = "exec sleep 60"
'''


def write(tmp_path, name, text):
    d = tmp_path / name
    d.mkdir()
    (d / "stack.toml").write_text(text)
    return d


def test_discovers_every_directory_with_a_manifest(tmp_path):
    write(tmp_path, "demo", GOOD)
    write(tmp_path, "other", GOOD.replace('"demo"', '"other"').replace("19999", "19998"))
    (tmp_path / "not-a-stack").mkdir()
    assert [s.name for s in stacks.discover(tmp_path)] == ["demo", "other"]


@pytest.mark.parametrize("text, message", [
    (GOOD.replace('port = 19999', ''), "missing required field 'port'"),
    (GOOD.replace('port = 19999', 'port = "19999"'), "'port' must be a int"),
    (GOOD + 'colour = "blue"\n', "unknown field 'colour'"),
    (GOOD.replace('"demo"', '"renamed"'), "must equal the directory name"),
    (GOOD.replace('19999', '80'), "between 1024 and 65535"),
    (GOOD + 'requires = "node"\n', "'requires' must be a list"),
    ("name = [", "not valid TOML"),
])
def test_bad_manifests_are_explained(tmp_path, text, message):
    write(tmp_path, "demo", text)
    with pytest.raises(stacks.ManifestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        stacks.discover(tmp_path)


def test_two_stacks_on_one_port_are_refused(tmp_path):
    write(tmp_path, "demo", GOOD)
    write(tmp_path, "other", GOOD.replace('"demo"', '"other"'))
    with pytest.raises(stacks.ManifestError, match="both claim port 19999"):
        stacks.discover(tmp_path)


def test_unavailable_reasons(tmp_path):
    d = write(tmp_path, "demo", GOOD + 'requires = ["no-such-command-xyz"]\n')
    assert stacks.parse(d / "stack.toml").unavailable_reason() == "no-such-command-xyz not found on PATH"
    (d / "stack.toml").write_text(GOOD + '''check = "echo checking; echo 'ext-demo not loaded'; exit 1"\n''')
    assert stacks.parse(d / "stack.toml").unavailable_reason() == "ext-demo not loaded"
    (d / "stack.toml").write_text(GOOD + 'toolchain = { java = 999 }\n')
    assert "needs a JDK >= 999" in stacks.parse(d / "stack.toml").unavailable_reason()
    (d / "stack.toml").write_text(GOOD + 'check = "true"\n')
    assert stacks.parse(d / "stack.toml").unavailable_reason() is None


def test_select_names_an_unknown_stack():
    with pytest.raises(stacks.StackError, match="no such stack: nope"):
        stacks.select("nope")


def test_a_stack_that_dies_while_starting_is_reported_with_its_log(tmp_path):
    d = write(tmp_path, "demo", GOOD.replace("exec sleep 60", "echo 'cannot bind: boom'; exit 3"))
    with pytest.raises(stacks.StackError, match=r"(?s)exited with code 3.*cannot bind: boom"):
        stacks.start(stacks.parse(d / "stack.toml"))


def test_a_failing_build_is_reported_with_its_log(tmp_path):
    d = write(tmp_path, "demo", GOOD.replace('build = "true"', 'build = "echo compile error here; exit 1"'))
    with pytest.raises(stacks.StackError, match=r"(?s)build failed.*compile error here"):
        stacks.build(stacks.parse(d / "stack.toml"))


def test_setup_with_a_stack_runs_only_that_stacks_setup(monkeypatch):
    """`make verify STACK=x` runs setup first: another stack's setup step must not run then."""
    from harness import __main__ as cli, provision
    seen = []
    monkeypatch.setattr(cli, "stop_like_ctrl_c_on_sigterm", lambda: None)
    monkeypatch.setattr(provision, "setup", lambda selected: seen.append([s.name for s in selected]) or 0)
    assert cli.main(["setup", "--stack", "node-cluster"]) == 0
    assert cli.main(["setup"]) == 0
    assert seen[0] == ["node-cluster"]
    assert len(seen[1]) == len(stacks.discover()) > 1
    assert cli.main(["setup", "--stack", "no-such-stack"]) == 2
