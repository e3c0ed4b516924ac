"""`make setup`: install what the harness and every discovered stack need, from Debian and their own steps."""
import os
import shutil
import subprocess
import sys

from .toolchains import ToolchainError

# The harness's own needs: the three backends and the closed-loop load generator.
HARNESS_APT = ["redis-server", "mariadb-server", "memcached", "wrk"]


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


def setup(stacks) -> int:
    apt_install(HARNESS_APT + [p for s in stacks for p in s.apt])
    for s in stacks:
        if not s.setup:
            continue
        print(f"{s.name}: setup ...", flush=True)
        try:
            env = s.env()
        except ToolchainError:
            env = None  # the setup step may be what provides the toolchain
        proc = subprocess.run(["bash", "-c", s.setup], cwd=s.dir, env=env)
        if proc.returncode != 0:
            # Not fatal: the stack's own check reports it unavailable, loudly, wherever it is listed.
            print(f"*** {s.name}: setup exited with {proc.returncode}; it will be reported unavailable ***",
                  file=sys.stderr)
    return 0
