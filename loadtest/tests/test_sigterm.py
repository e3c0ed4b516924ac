"""A harness stopped with SIGTERM stops the stack it started (it used to leave it serving)."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness.ports import free_port

LOADTEST = Path(__file__).resolve().parents[1]

# Runs a throwaway stack (python's http.server answering /hello) the way `harness run` does.
SCRIPT = '''
import sys
from pathlib import Path
from harness import __main__ as cli, stacks
cli.stop_like_ctrl_c_on_sigterm()
stack = stacks.parse(Path(sys.argv[1]) / "stack.toml")
try:
    with stacks.start(stack) as running:
        print(running.pid, flush=True)
        running.proc.wait()
except KeyboardInterrupt:
    print("stopped", flush=True)
'''


def test_sigterm_stops_the_stack(tmp_path):
    d = tmp_path / "demo"
    d.mkdir()
    (d / "hello").write_text("hi")
    port = free_port("127.0.0.1")
    (d / "stack.toml").write_text(
        f'name = "demo"\nlanguage = "Python"\nframework = "none"\nport = {port}\nbuild = "true"\n'
        f'run = "exec {sys.executable} -m http.server --protocol HTTP/1.1 --bind 127.0.0.1 {port}"\n')
    harness = subprocess.Popen([sys.executable, "-c", SCRIPT, str(d)], cwd=LOADTEST, text=True,
                               stdout=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(LOADTEST)})
    try:
        stack_pid = int(harness.stdout.readline())
        os.kill(harness.pid, signal.SIGTERM)
        assert harness.stdout.readline().strip() == "stopped"
        assert harness.wait(timeout=20) == 0
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                os.kill(stack_pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        else:
            raise AssertionError(f"the stack (pid {stack_pid}) still runs after the harness got SIGTERM")
    finally:
        harness.kill()
        harness.wait()
