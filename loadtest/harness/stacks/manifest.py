"""Stacks are found, never listed: every top-level directory with a stack.toml is one.

The manifest says what the stack is, what it needs, how to build it and how to run it in the
foreground. See README.md ("Adding a stack") for the fields.
"""
import os
import pathlib
import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field

from harness.config import ROOT, RUN_DIR, settings
from harness.contract import deviations as deviations_
from harness.stacks import toolchains

MANIFEST = "stack.toml"
REQUIRED = {"name": str, "language": str, "framework": str, "port": int, "build": str, "run": str}
OPTIONAL = {"description": str, "requires": list, "apt": list, "setup": str, "check": str,
            "ready_timeout": int, "toolchain": dict, "versions": str, "stall_dump": str, "path": list,
            "deviation": list, "test": str}
COMMAND_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


class ManifestError(ValueError):
    pass


class StackError(RuntimeError):
    pass


@dataclass(frozen=True)
class Availability:
    """Whether this machine can build and run a stack. `after_build`: not yet known, because the
    stack's own `path` directories (which its setup or build fills) may bring what is missing now."""
    reason: str | None = None
    after_build: bool = False

    @property
    def buildable(self) -> bool:
        return self.reason is None or self.after_build

    def __str__(self) -> str:
        if self.reason is None:
            return "available"
        if self.after_build:
            return f"checked after build (before it: {self.reason})"
        return f"unavailable: {self.reason}"


@dataclass
class Stack:
    name: str
    dir: os.PathLike
    language: str
    framework: str
    port: int
    build: str
    run: str
    description: str = ""
    requires: list = field(default_factory=list)
    apt: list = field(default_factory=list)
    setup: str = ""
    check: str = ""
    ready_timeout: int = 60
    toolchain: dict = field(default_factory=dict)
    versions: str = ""
    stall_dump: str = ""
    path: list = field(default_factory=list)
    deviations: list = field(default_factory=list)  # [[deviation]]: deviations.Deviation, validated
    test: str = ""  # the stack's own unit tests (parsers, protocol pieces), run by `make test` after the build

    @property
    def own_dirs(self) -> list[str]:
        """The manifest's `path` directories, absolute: first on PATH for every command of the stack."""
        return [str(pathlib.Path(self.dir, d).absolute()) for d in self.path]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def host(self) -> str:
        return settings()["HOST"]

    @property
    def run_dir(self):
        d = RUN_DIR / "stacks" / self.name
        d.mkdir(parents=True, exist_ok=True)
        return d

    def env(self, overrides: dict[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env.update(settings())
        env.update(overrides or {})
        env.update(PORT=str(self.port), STACK_NAME=self.name, RUN_DIR=str(self.run_dir))
        env.update(toolchains.environment(self.toolchain, self.own_dirs, env.get("PATH", "")))
        return env

    def shell(self, command: str, env: dict[str, str] | None = None, **kwargs) -> subprocess.CompletedProcess:
        """Run one of the manifest's commands the way all of them run: `bash -c` in the stack's
        directory, with the stack's environment, reading nothing from the terminal unless told to."""
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.run(["bash", "-c", command], cwd=self.dir, env=self.env() if env is None else env,
                              **kwargs)

    def availability(self) -> Availability:
        """`requires` first (needed to build at all), then the toolchain, then the manifest's check."""
        search_path = os.pathsep.join([*self.own_dirs, os.environ.get("PATH", "")])
        for cmd in self.requires:
            if not shutil.which(cmd, path=search_path):
                return Availability(f"{cmd} not found on PATH")
        try:
            env = self.env()
        except toolchains.ToolchainError as e:
            return Availability(str(e))
        problem = self.runtime_problem(env)
        return Availability(problem, after_build=problem is not None and bool(self.path))

    def unavailable_reason(self) -> str | None:
        """None when the stack may be built here (available, or settled only after its build), else why not."""
        found = self.availability()
        return None if found.buildable else found.reason

    def runtime_problem(self, env: dict[str, str]) -> str | None:
        """What the toolchain check and then the manifest's `check` say is missing (None: nothing)."""
        found = toolchains.problems(self.toolchain, env["PATH"])
        if found:
            return "; ".join(found)
        if self.check:
            proc = self.shell(self.check, env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if proc.returncode != 0:
                lines = [line for line in proc.stdout.splitlines() if line.strip()]
                return lines[-1].strip() if lines else f"check exited with {proc.returncode}"
        return None


def parse(path) -> Stack:
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as e:
        raise ManifestError(f"{path}: not valid TOML: {e}") from None
    problems = []
    for key, kind in REQUIRED.items():
        if key not in data:
            problems.append(f"missing required field '{key}'")
        elif not isinstance(data[key], kind):
            problems.append(f"'{key}' must be a {kind.__name__}")
    for key, value in data.items():
        if key not in REQUIRED and key not in OPTIONAL:
            problems.append(f"unknown field '{key}' (known: {', '.join([*REQUIRED, *OPTIONAL])})")
        elif key in OPTIONAL and not isinstance(value, OPTIONAL[key]):
            problems.append(f"'{key}' must be a {OPTIONAL[key].__name__}")
    if not problems:
        problems += _toolchain_problems(data.get("toolchain", {})) + _path_problems(data.get("path", []))
    declared, bad = deviations_.parse(data.pop("deviation", []))
    if not problems:
        problems += bad
    if not problems and data["name"] != path.parent.name:
        problems.append(f"name '{data['name']}' must equal the directory name '{path.parent.name}'")
    if not problems and not 1024 <= data["port"] <= 65535:
        problems.append(f"port {data['port']} must be between 1024 and 65535")
    if problems:
        raise ManifestError(f"{path}: " + "; ".join(problems))
    return Stack(dir=path.parent, deviations=declared, **data)


def _toolchain_problems(toolchain: dict) -> list[str]:
    out = []
    for name, value in toolchain.items():
        if not COMMAND_NAME.match(name):
            out.append(f"toolchain '{name}' is not a command name")
            continue
        try:
            toolchains.minimum_version(name, value)
        except ValueError as e:
            out.append(str(e))
    return out


def _path_problems(dirs: list) -> list[str]:
    out = []
    for d in dirs:
        if not isinstance(d, str) or not d.strip():
            out.append(f"'path' entries must be directory names, not {d!r}")
        elif pathlib.PurePosixPath(d).is_absolute() or ".." in pathlib.PurePosixPath(d).parts:
            out.append(f"'path' entry {d!r} must be a directory inside the stack (relative, without '..')")
    return out


def discover(root=ROOT) -> list[Stack]:
    stacks = [parse(p) for p in sorted(root.glob(f"*/{MANIFEST}"))]
    seen: dict[int, str] = {}
    for s in stacks:
        if s.port in seen:
            raise ManifestError(f"{s.name} and {seen[s.port]} both claim port {s.port}")
        seen[s.port] = s.name
    return stacks


def select(name: str | None) -> list[Stack]:
    stacks = discover()
    if not name:
        return stacks
    wanted = [n for n in name.replace(",", " ").split() if n]
    by_name = {s.name: s for s in stacks}
    missing = [n for n in wanted if n not in by_name]
    if missing:
        raise StackError(f"no such stack: {', '.join(missing)} (found: {', '.join(by_name) or 'none'})")
    return [by_name[n] for n in wanted]
