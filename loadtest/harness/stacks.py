"""Stacks are found, never listed: every top-level directory with a stack.toml is one.

The manifest says what the stack is, what it needs, how to build it and how to run it in the
foreground. See README.md ("Adding a stack") for the fields.
"""
import os
import pathlib
import re
import resource
import shutil
import signal
import socket
import subprocess
import time
import tomllib
from dataclasses import dataclass, field

from . import deviations as deviations_, procstats, toolchains
from .config import LOG_DIR, ROOT, RUN_DIR, settings

MANIFEST = "stack.toml"
REQUIRED = {"name": str, "language": str, "framework": str, "port": int, "build": str, "run": str}
OPTIONAL = {"description": str, "requires": list, "apt": list, "setup": str, "check": str,
            "ready_timeout": int, "toolchain": dict, "versions": str, "stall_dump": str, "path": list,
            "deviation": list, "test": str}
STOP_TIMEOUT = 15.0
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


def raise_nofile(wanted: int) -> int:
    """Raise this process's soft descriptor limit towards the hard one; the stacks it starts inherit it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard == resource.RLIM_INFINITY else min(hard, max(wanted, soft))
    if soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def _log(stack: Stack, what: str):
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    return LOG_DIR / f"{stack.name}-{what}.log"


def build(stack: Stack) -> None:
    log = _log(stack, "build")
    with open(log, "w") as out:
        proc = stack.shell(stack.build, stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise StackError(f"{stack.name}: build failed (exit {proc.returncode}); last lines of {log}:\n{_tail(log)}")
    if stack.path:
        # What the build put into the stack's own directories is what runs: check that, not the
        # system's runtime the check before the build may have seen.
        problem = stack.runtime_problem(stack.env())
        if problem:
            raise StackError(f"{stack.name}: built, but {problem} (checked after the build, with the stack's "
                             f"path {', '.join(stack.path)} first on PATH)")


def unit_test(stack: Stack) -> None:
    """The manifest's `test` command, after the build; no services are needed, none are assumed."""
    if not stack.test:
        return
    log = _log(stack, "test")
    with open(log, "w") as out:
        proc = stack.shell(stack.test, stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise StackError(f"{stack.name}: unit tests failed (exit {proc.returncode}); last lines of {log}:\n"
                         f"{_tail(log)}")


def _tail(path, lines: int = 25) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _listening(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.3):
            return True
    except OSError:
        return False


class Running:
    """A stack started in the foreground as its own process group; stop() ends the whole group."""

    def __init__(self, stack: Stack, proc: subprocess.Popen, log):
        self.stack, self.proc, self.log = stack, proc, log

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stall_dump(self) -> str | None:
        """The manifest's stall_dump (PID = the server's leader process): what a hung server is doing."""
        if not self.stack.stall_dump or not self.alive():
            return None
        try:
            proc = self.stack.shell(self.stack.stall_dump, env={**self.stack.env(), "PID": str(self.pid)},
                                    text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        except subprocess.TimeoutExpired:
            return "(stall_dump did not finish within 60 s)"
        return proc.stdout.rstrip() or f"(stall_dump printed nothing; exit {proc.returncode})"

    def stop(self) -> None:
        # Listed first: a daemon-style master (php-fpm) leaves the process group with setsid(),
        # and once its parent exits it is no longer anybody's descendant.
        members = procstats.tree(self.proc.pid)
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pass
        # Whatever outlived the leader (a master that forked workers) ends now.
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for pid in members:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


def start(stack: Stack, env: dict[str, str] | None = None) -> Running:
    """Start the stack's run command; `env` overrides settings (the verifier's short time limits)."""
    if _listening(stack.host, stack.port):
        raise StackError(f"{stack.name}: port {stack.port} is already in use; stop whatever listens there")
    log = _log(stack, "run")
    out = open(log, "w")
    proc = subprocess.Popen(["bash", "-c", stack.run], cwd=stack.dir, env=stack.env(env), stdout=out,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    out.close()
    running = Running(stack, proc, log)
    try:
        _wait_ready(running)
    except BaseException:
        running.stop()
        raise
    return running


def _wait_ready(running: Running) -> None:
    """Ready means GET /hello answers 200, not merely that the port accepts."""
    stack = running.stack
    deadline = time.monotonic() + stack.ready_timeout
    request = f"GET /hello HTTP/1.1\r\nHost: {stack.host}\r\nConnection: close\r\n\r\n".encode()
    while time.monotonic() < deadline:
        if not running.alive():
            raise StackError(f"{stack.name}: exited with code {running.proc.returncode} while starting; "
                             f"last lines of {running.log}:\n{_tail(running.log)}")
        try:
            with socket.create_connection((stack.host, stack.port), timeout=1) as sock:
                sock.sendall(request)
                if sock.recv(16).startswith(b"HTTP/1.1 200"):
                    return
        except OSError:
            pass
        time.sleep(0.1)
    raise StackError(f"{stack.name}: GET /hello did not answer 200 within {stack.ready_timeout}s; "
                     f"last lines of {running.log}:\n{_tail(running.log)}")
