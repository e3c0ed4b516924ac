"""Discovery and manifests: a contributor's mistake gets a clear message."""
import pathlib
import re

import pytest

from harness import stacks
from harness.config import ROOT
from harness.stacks import manifest

GOOD = '''
name = "demo"
language = "Python"
framework = "none"
port = 19999
build = "true"
run = "exec sleep 60"
'''

DEVIATION = '''
[[deviation]]
check = "framing (RFC 9112: 400 and close)"
case = "Content-Length: 1.5"
observed = "408"
why = "Swoole's reactor frames the body with strtoull() before llhttp sees the head"
upstream = "https://github.com/swoole/swoole-src/pull/2062"
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
    (GOOD + 'toolchain = { go = 1.20 }\n', 'quote the version, like go = "1.20"'),
    (GOOD + 'toolchain = { go = "latest" }\n', "toolchain 'go': 'latest' is not a version"),
    (GOOD + 'toolchain = { "go version" = 1 }\n', "toolchain 'go version' is not a command name"),
    (GOOD + 'path = "bin"\n', "'path' must be a list"),
    (GOOD + 'path = ["/usr/local/go/bin"]\n', "must be a directory inside the stack"),
    (GOOD + 'path = ["../other/bin"]\n', "must be a directory inside the stack"),
    ("name = [", "not valid TOML"),
    (GOOD + 'deviation = "none"\n', "'deviation' must be a list"),
    (GOOD + DEVIATION.replace('check = "framing (RFC 9112: 400 and close)"', 'check = "golden responses"'),
     "check 'golden responses' may not be declared as a deviation: only the cases of these protocol-hygiene checks"),
    (GOOD + DEVIATION.replace("framing (RFC 9112: 400 and close)", "framing"), "check 'framing' may not be declared"),
    (GOOD + DEVIATION.replace('check = "framing (RFC 9112: 400 and close)"', 'check = "head timeout (64 clients '
                                                                              'trickling a head)"'),
     "may not be declared as a deviation"),
    (GOOD + DEVIATION.replace("Content-Length: 1.5", "Content-Length: 2.5"),
     "'framing (RFC 9112: 400 and close)' has no case 'Content-Length: 2.5' (its cases: 'two different"),
    (GOOD + DEVIATION.replace('observed = "408"', 'observed = "timeout"'), "observed 'timeout' is none of"),
    (GOOD + DEVIATION.replace('observed = "408"', 'observed = 408'), "'observed' must be a non-empty string"),
    (GOOD + DEVIATION.replace('observed = "408"', 'observed = "408 closed"'), "observed '408 closed' is none of"),
    (GOOD + DEVIATION.replace('why = "', 'reason = "'), "unknown field 'reason'"),
    (GOOD + DEVIATION.replace('why = "', '# why = "'), "[[deviation]] 1: missing 'why'"),
    (GOOD + DEVIATION.replace('why = "Swoole', 'why = "').replace('why = "', 'why = " "#'), "'why' must be a non-empty"),
    (GOOD + DEVIATION.replace('upstream = "', '# upstream = "'), "missing 'upstream'"),
    (GOOD + DEVIATION.replace("https://github.com/swoole/swoole-src/pull/2062", "swoole-src#2062"),
     "upstream 'swoole-src#2062' must be the URL of the upstream issue or pull request"),
    (GOOD + DEVIATION + DEVIATION, "[[deviation]] 2: 'Content-Length: 1.5' of 'framing (RFC 9112: 400 and close)' "
                                   "is declared twice"),
])
def test_bad_manifests_are_explained(tmp_path, text, message):
    write(tmp_path, "demo", text)
    with pytest.raises(stacks.ManifestError, match=re.escape(message)):
        stacks.discover(tmp_path)


def test_declared_deviations_are_read(tmp_path):
    text = GOOD + DEVIATION + DEVIATION.replace("framing (RFC 9112: 400 and close)", "sizes (served to 8 KiB; 414 "
                                                "and 431 beyond the limits)").replace(
        "Content-Length: 1.5", "a request line of 64 KiB").replace('"408"', '"400 open"')
    d = write(tmp_path, "demo", text)
    stack = stacks.parse(d / "stack.toml")
    assert [(x.check, x.case, x.observed) for x in stack.deviations] == [
        ("framing (RFC 9112: 400 and close)", "Content-Length: 1.5", "408"),
        ("sizes (served to 8 KiB; 414 and 431 beyond the limits)", "a request line of 64 KiB", "400 open")]
    assert stack.deviations[0].upstream == "https://github.com/swoole/swoole-src/pull/2062"
    assert stacks.parse(write(tmp_path, "plain", GOOD.replace('"demo"', '"plain"')) / "stack.toml").deviations == []


def test_every_stack_in_the_repository_is_discovered_and_cites_its_deviations_in_its_readme():
    found = stacks.discover()  # a ManifestError here names the stack and the problem
    assert sorted(s.name for s in found) == sorted(p.parent.name for p in ROOT.glob("*/stack.toml"))
    for stack in found:
        # A known deviation is a workaround a reader must see: its upstream link is in the stack's README.
        readme = (pathlib.Path(stack.dir) / "README.md").read_text()
        missing = [d.upstream for d in stack.deviations if d.upstream not in readme]
        assert not missing, f"{stack.name}: README.md does not cite {missing}"


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


def test_failing_unit_tests_are_reported_with_their_log(tmp_path):
    d = write(tmp_path, "demo", GOOD + 'test = "echo 1 of 7 failed: parses_id; exit 1"\n')
    with pytest.raises(stacks.StackError, match=r"(?s)unit tests failed \(exit 1\).*1 of 7 failed: parses_id"):
        stacks.unit_test(stacks.parse(d / "stack.toml"))


def test_passing_unit_tests_run_in_the_stacks_directory(tmp_path):
    d = write(tmp_path, "demo", GOOD + 'test = "touch ran-here"\n')
    stacks.unit_test(stacks.parse(d / "stack.toml"))
    assert (d / "ran-here").exists()


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


FAKE_RUNTIME = "mkdir -p tools && printf '#!/bin/sh\\necho fakert version {version}\\n' > tools/fakert && chmod +x tools/fakert"


def test_a_runtime_on_path_is_checked_before_anything_runs(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "fakert").write_text("#!/bin/sh\necho fakert version 1.9.3\n")
    (bin_dir / "fakert").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    d = write(tmp_path, "demo", GOOD + 'toolchain = { fakert = "1.26" }\n')
    found = stacks.parse(d / "stack.toml").availability()
    assert str(found) == f"unavailable: needs fakert >= 1.26 (found 1.9.3 at {bin_dir / 'fakert'})"
    assert not found.buildable


def test_a_runtime_the_build_brings_is_checked_after_the_build(tmp_path):
    d = write(tmp_path, "demo", GOOD.replace('build = "true"', f'build = "{FAKE_RUNTIME.format(version="2.1.0")}"')
              + 'path = ["tools"]\ntoolchain = { fakert = "2.0" }\ncheck = "fakert"\n')
    stack = stacks.parse(d / "stack.toml")
    before = stack.availability()
    assert str(before) == "checked after build (before it: needs fakert >= 2.0: fakert not found on PATH)"
    assert before.buildable and stack.unavailable_reason() is None
    stacks.build(stack)
    assert str(stack.availability()) == "available"
    # build, check and run see the stack's own directories first on PATH
    where = stack.shell("command -v fakert", capture_output=True, text=True).stdout.strip()
    assert where == str(d / "tools" / "fakert")


@pytest.mark.parametrize("build, message", [
    ("true", "built, but needs fakert >= 2.0: fakert not found on PATH (checked after the build, "
             "with the stack's path tools first on PATH)"),
    (FAKE_RUNTIME.format(version="1.0"), "built, but needs fakert >= 2.0 (found 1.0 at "),
])
def test_a_build_that_does_not_bring_its_runtime_fails(tmp_path, build, message):
    d = write(tmp_path, "demo", GOOD.replace('build = "true"', f'build = "{build}"')
              + 'path = ["tools"]\ntoolchain = { fakert = "2.0" }\n')
    with pytest.raises(stacks.StackError, match=re.escape(message)):
        stacks.build(stacks.parse(d / "stack.toml"))


def test_make_list_says_checked_after_build(tmp_path, monkeypatch, capsys):
    from harness import __main__ as cli
    write(tmp_path, "demo", GOOD + 'path = ["tools"]\ntoolchain = { fakert = 2 }\n')
    write(tmp_path, "other", GOOD.replace('"demo"', '"other"').replace("19999", "19998")
          + 'toolchain = { nosuchrt = 2 }\n')
    real_discover = stacks.discover
    monkeypatch.setattr(manifest, "discover", lambda: real_discover(tmp_path))  # what select() calls
    monkeypatch.setattr(cli, "stop_like_ctrl_c_on_sigterm", lambda: None)
    assert cli.main(["list"]) == 0
    out = capsys.readouterr().out
    assert "checked after build (before it: needs fakert >= 2: fakert not found on PATH)" in out
    assert "unavailable: needs nosuchrt >= 2: nosuchrt not found on PATH" in out


def test_make_list_says_how_many_deviations_a_stack_declares(tmp_path, monkeypatch, capsys):
    from harness import __main__ as cli
    write(tmp_path, "demo", GOOD + DEVIATION)
    write(tmp_path, "other", GOOD.replace('"demo"', '"other"').replace("19999", "19998"))
    real_discover = stacks.discover
    monkeypatch.setattr(manifest, "discover", lambda: real_discover(tmp_path))  # what select() calls
    monkeypatch.setattr(cli, "stop_like_ctrl_c_on_sigterm", lambda: None)
    assert cli.main(["list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("demo ") and lines[0].endswith("available; declares 1 known deviation"), lines
    assert lines[1].startswith("other ") and "deviation" not in lines[1], lines
