"""Running a stack's commands: its build, its unit tests, and the server itself as a process group."""
import os
import signal
import socket
import subprocess
import time

from harness import ports
from harness.accounting import procstats
from harness.config import LOG_DIR
from harness.stacks.manifest import Stack, StackError

STOP_TIMEOUT = 15.0


def log_path(stack: Stack, what: str):
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    return LOG_DIR / f"{stack.name}-{what}.log"


def build(stack: Stack) -> None:
    log = log_path(stack, "build")
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
    log = log_path(stack, "test")
    with open(log, "w") as out:
        proc = stack.shell(stack.test, stdout=out, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise StackError(f"{stack.name}: unit tests failed (exit {proc.returncode}); last lines of {log}:\n"
                         f"{_tail(log)}")


def _tail(path, lines: int = 25) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])




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
    if ports.listening(stack.host, stack.port):
        raise StackError(f"{stack.name}: port {stack.port} is already in use; stop whatever listens there")
    log = log_path(stack, "run")
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
