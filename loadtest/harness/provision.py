"""`make setup`: install what the harness and every discovered stack need, from Debian and their own steps."""
import fcntl
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

from harness.loadgen import oha as loadgen_oha
from harness.stacks.toolchains import ToolchainError

# The harness's own needs: the three backends, the closed-loop load generator, and the benchmark's
# ceilings (nginx for /hello; redis-benchmark comes with redis-server, mysqlslap with mariadb-server;
# sysbench for the SELECT, memcslap from libmemcached-tools for memcached).
HARNESS_APT = ["redis-server", "mariadb-server", "memcached", "wrk", "nginx", "sysbench", "libmemcached-tools",
               # Multi-host runs: OpenSSH reaches the hosts (sshd serves the simulated ones), iperf3
               # measures the bandwidth between them.
               "openssh-client", "openssh-server", "iperf3"]
# The open-loop, coordinated-omission-correcting generator. Not in Debian bookworm: built with cargo.
OHA_VERSION = "1.16.0"


def _installed(package: str) -> bool:
    proc = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True)
    return proc.returncode == 0 and "install ok installed" in proc.stdout


def apt_install(packages: list[str]) -> None:
    missing = sorted({p for p in packages if not _installed(p)})
    if not missing:
        print(f"apt: all {len(set(packages))} packages present")
        return
    if not shutil.which("apt-get"):
        raise SystemExit(f"missing packages {missing} and no apt-get here: install them by hand")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    print(f"apt: installing {' '.join(missing)}", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(sudo + ["apt-get", "update", "-q"], check=True, env=env)
    subprocess.run(sudo + ["apt-get", "install", "-y", "-q", "--no-install-recommends", *missing], check=True, env=env)


# The build runs once per machine (cargo installs into ~/.cargo/bin), so its lock and log are per machine too.
OHA_LOCK = pathlib.Path(tempfile.gettempdir()) / "reference-servers-oha-build.lock"
OHA_LOG = pathlib.Path(tempfile.gettempdir()) / "reference-servers-oha-build.log"


def _oha_current() -> str | None:
    found = loadgen_oha.binary()
    if found and OHA_VERSION in subprocess.run([found, "--version"], capture_output=True, text=True).stdout:
        return found
    return None


def _cargo() -> str | None:
    cargo = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
    return cargo if os.path.exists(cargo) else None


def _oha_build_command(cargo: str) -> list[str]:
    # flock: one build per machine; nice: a build beside a verify or a QUICK pass takes only idle CPU.
    return ["flock", "-n", str(OHA_LOCK), "nice", "-n", "19", cargo, "install", "--locked", "oha", "--version", OHA_VERSION]


def oha_building() -> bool:
    """Whether a build of oha holds the lock now."""
    with open(OHA_LOCK, "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f, fcntl.LOCK_UN)
        return False


def install_oha() -> None:
    """oha for the open-loop runs. Compiling it takes about 12 minutes on 2 cores, so `make setup` starts it
    in the background and goes on: verification and QUICK passes do not need it; what does waits (ensure_oha)."""
    found = _oha_current()
    if found:
        print(f"oha: {found} ({OHA_VERSION})")
        return
    if oha_building():
        print(f"oha: already building in the background (log: {OHA_LOG})")
        return
    cargo = _cargo()
    if not cargo:
        print(f"*** oha {OHA_VERSION} is missing and there is no cargo to build it: the benchmark's open-loop runs "
              f"will be skipped. Install Rust (https://rustup.rs) and run `make setup` again. ***", file=sys.stderr)
        return
    with open(OHA_LOG, "w") as log:
        subprocess.Popen(_oha_build_command(cargo), stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True)  # outlives `make setup`
    print(f"oha: building {OHA_VERSION} with cargo in the background (about 12 min once; log: {OHA_LOG}); "
          f"open-loop runs wait for it, QUICK passes skip them until it is there", flush=True)


def ensure_oha(wait: bool = True) -> str | None:
    """oha's path once it is there: waits for a background build (wait=True), or builds it now when none runs.
    wait=False: only what is there already."""
    found = _oha_current()
    if found or not wait:
        return found
    if oha_building():
        print(f"oha: waiting for its background build to finish (log: {OHA_LOG}) ...", flush=True)
        with open(OHA_LOCK, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            fcntl.flock(f, fcntl.LOCK_UN)
        found = _oha_current()
        if not found:
            print(f"*** the background build of oha failed (see {OHA_LOG}): open-loop runs will be skipped ***",
                  file=sys.stderr)
        return found
    cargo = _cargo()
    if not cargo:
        return None
    print(f"oha: building {OHA_VERSION} with cargo (about 12 min, once) ...", flush=True)
    proc = subprocess.run(_oha_build_command(cargo))
    if proc.returncode != 0:
        print(f"*** cargo install oha failed (exit {proc.returncode}): open-loop runs will be skipped ***", file=sys.stderr)
    return _oha_current()


def setup(stacks) -> int:
    apt_install(HARNESS_APT + [p for s in stacks for p in s.apt])
    install_oha()
    for s in stacks:
        if not s.setup:
            continue
        print(f"{s.name}: setup ...", flush=True)
        try:
            env = s.env()
        except ToolchainError:
            env = dict(os.environ)  # the setup step may be what provides the toolchain
        proc = s.shell(s.setup, env=env, stdin=None)  # stdin: sudo may ask for a password
        if proc.returncode != 0:
            # Not fatal: the stack's own check reports it unavailable, loudly, wherever it is listed.
            print(f"*** {s.name}: setup exited with {proc.returncode}; it will be reported unavailable ***",
                  file=sys.stderr)
    return 0
