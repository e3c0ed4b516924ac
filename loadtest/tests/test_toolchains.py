"""Toolchains: any runtime with a version command, compared as versions, with a reason on a miss."""
import pytest
from packaging.version import Version

from harness.stacks import toolchains


def fake_runtime(directory, name, script):
    """An executable `name` in `directory` running the shell `script` (what a version command prints)."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / name
    path.write_text(f"#!/bin/sh\n{script}\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("output, version", [
    ("go version go1.26.8 linux/amd64", "1.26.8"),
    ("v20.20.2", "20.20.2"),
    ("Python 3.11.7", "3.11.7"),
    ('openjdk version "25.0.1" 2025-10-21', "25.0.1"),
    ("26", "26"),
    ("no number here", None),
])
def test_the_first_version_number_is_read(output, version):
    assert toolchains.version_in(output) == (Version(version) if version else None)


def test_minimums_compare_as_versions_not_as_text():
    assert toolchains.minimum_version("go", "1.26") > Version("1.9")
    assert toolchains.minimum_version("python3", "3.9") < Version("3.11.7")
    assert toolchains.minimum_version("node", 24) == Version("24.0.0")


@pytest.mark.parametrize("value, message", [
    (1.2, 'quote the version, like go = "1.20"'),
    (True, "not True"),
    ("latest", "is not a version"),
    ("1.x", "is not a version"),
])
def test_a_minimum_that_is_not_a_version_is_explained(value, message):
    with pytest.raises(ValueError, match=message):
        toolchains.minimum_version("go", value)


def test_any_runtime_is_checked_by_its_version(tmp_path):
    bin_dir = tmp_path / "bin"
    where = fake_runtime(bin_dir, "fakert", 'echo "fakert version 1.9.3"')
    assert toolchains.problems({"fakert": "1.26"}, str(bin_dir)) == [f"needs fakert >= 1.26 (found 1.9.3 at {where})"]
    assert toolchains.problems({"fakert": "1.9"}, str(bin_dir)) == []
    assert toolchains.problems({"fakert": 1}, str(bin_dir)) == []
    assert toolchains.problems({"nosuchrt": 2}, str(bin_dir)) == ["needs nosuchrt >= 2: nosuchrt not found on PATH"]


def test_a_known_runtime_uses_its_own_version_command(tmp_path):
    # `go --version` is an error; `go version` is how go says it.
    bin_dir = tmp_path / "bin"
    where = fake_runtime(bin_dir, "go", 'case "$1" in version) echo "go version go1.21.3 linux/amd64";; '
                                        '*) echo "flag provided but not defined: -version" >&2; exit 2;; esac')
    assert toolchains.problems({"go": "1.26"}, str(bin_dir)) == [f"needs go >= 1.26 (found 1.21.3 at {where})"]
    assert toolchains.problems({"go": "1.21"}, str(bin_dir)) == []


def test_a_version_command_that_fails_says_nothing_useful_or_hangs(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    search_path = f"{bin_dir}:/usr/bin:/bin"
    fake_runtime(bin_dir, "broken", "echo 'line 2: libfoo.so.1: cannot open' >&2; exit 127")
    assert toolchains.problems({"broken": 1}, search_path) == [
        "needs broken >= 1: `broken --version` failed (exit 127: line 2: libfoo.so.1: cannot open)"]
    fake_runtime(bin_dir, "mute", "echo 'usage: mute [flags]'")
    assert toolchains.problems({"mute": 1}, search_path) == [
        "needs mute >= 1: `mute --version` printed no version number (usage: mute [flags])"]
    fake_runtime(bin_dir, "stuck", "exec sleep 30")
    monkeypatch.setattr(toolchains, "VERSION_TIMEOUT", 1)
    assert toolchains.problems({"stuck": 1}, search_path) == [
        "needs stuck >= 1: `stuck --version` did not answer within 1 s"]


def test_a_replaced_binary_is_asked_again(tmp_path):
    bin_dir = tmp_path / "bin"
    path = fake_runtime(bin_dir, "fakert", 'echo "v1.0"')
    assert toolchains.problems({"fakert": 2}, str(bin_dir))
    path.unlink()
    fake_runtime(bin_dir, "fakert", 'echo "v2.0.1"')
    assert toolchains.problems({"fakert": 2}, str(bin_dir)) == []


def test_the_stack_dirs_come_first_on_path(tmp_path):
    env = toolchains.environment({}, [str(tmp_path / "a"), str(tmp_path / "b")], "/usr/bin")
    assert env == {"PATH": f"{tmp_path / 'a'}:{tmp_path / 'b'}:/usr/bin"}


def test_java_is_found_not_looked_up():
    with pytest.raises(toolchains.ToolchainError, match="needs a JDK >= 999"):
        toolchains.environment({"java": 999}, [], "/usr/bin")
    assert toolchains.problems({"java": 999}, "/usr/bin")[0].startswith("needs a JDK >= 999")
