"""`make setup`: install what the harness and every discovered stack need, from Debian and their own steps."""
import os
import shutil
import subprocess
import sys

from .toolchains import ToolchainError

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


def install_oha() -> None:
    """oha for the benchmark's open-loop runs; building it takes minutes, so only when missing."""
    from .bench import loadgen_oha
    found = loadgen_oha.binary()
    if found:
        version = subprocess.run([found, "--version"], capture_output=True, text=True).stdout.strip()
        if OHA_VERSION in version:
            print(f"oha: {found} ({version})")
            return
    cargo = shutil.which("cargo") or os.path.expanduser("~/.cargo/bin/cargo")
    if not os.path.exists(cargo):
        print(f"*** oha {OHA_VERSION} is missing and there is no cargo to build it: the benchmark's open-loop runs "
              f"will be skipped. Install Rust (https://rustup.rs) and run `make setup` again. ***", file=sys.stderr)
        return
    print(f"oha: building {OHA_VERSION} with cargo (several minutes, once) ...", flush=True)
    proc = subprocess.run([cargo, "install", "--locked", "oha", "--version", OHA_VERSION])
    if proc.returncode != 0:
        print(f"*** cargo install oha failed (exit {proc.returncode}): open-loop runs will be skipped ***", file=sys.stderr)


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
