"""What the run ran on and with: the machine, the tools' and the stacks' versions, the git commit."""
import os
import platform
import re
import shutil
import subprocess

from ..config import ROOT


def _first_line(cmd: list[str], cwd=None, env=None, timeout=15, require_ok=False) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if require_ok and proc.returncode != 0:
        return None
    text = (proc.stdout or proc.stderr).strip()
    return text.splitlines()[0].strip() if text else None


def runtime_version(cmd: str, cwd=None, env=None) -> str | None:
    """`cmd --version`, or the older single-dash spellings (java -version, nginx -v) when that fails."""
    for flag in ("--version", "-version", "-v"):
        line = _first_line([cmd, flag], cwd=cwd, env=env, require_ok=True)
        if line:
            return line
    return None


def cpu_model() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def memory_bytes() -> int | None:
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def os_name() -> str:
    try:
        m = re.search(r'^PRETTY_NAME="?([^"\n]+)', open("/etc/os-release").read(), re.M)
        return m.group(1) if m else "unknown"
    except OSError:
        return "unknown"


def somaxconn() -> int | None:
    try:
        return int(open("/proc/sys/net/core/somaxconn").read())
    except (OSError, ValueError):
        return None


def loadavg() -> str:
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "unknown"


def describe() -> dict:
    return {"cpu_model": cpu_model(), "cpus": os.cpu_count(), "cpus_usable": len(os.sched_getaffinity(0)),
            "kernel": platform.release(), "os": os_name(), "memory_bytes": memory_bytes(),
            "hostname": platform.node(), "somaxconn": somaxconn(), "python": platform.python_version()}


def git() -> dict:
    commit = _first_line(["git", "-C", str(ROOT), "rev-parse", "HEAD"])
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    branch = _first_line(["git", "-C", str(ROOT), "rev-parse", "--abbrev-ref", "HEAD"])
    return {"commit": commit, "branch": branch, "dirty": bool(dirty)}


TOOL_VERSION = {
    "wrk": ["wrk", "--version"],
    "nginx": ["nginx", "-v"],
    "redis-benchmark": ["redis-benchmark", "--version"],
    "sysbench": ["sysbench", "--version"],
    "memcslap": ["memcslap", "--version"],
    "redis-server": ["redis-server", "--version"],
    "mariadbd": ["mariadbd", "--version"],
    "memcached": ["memcached", "-V"],
}


def tool_versions(oha: str | None) -> dict:
    out = {name: _first_line(cmd) for name, cmd in TOOL_VERSION.items() if shutil.which(cmd[0])}
    if oha:
        out["oha"] = _first_line([oha, "--version"])
    return out


def stack_versions(stack) -> dict:
    """The runtime of every command the stack requires (`<cmd> --version`), and the name=version
    lines of its manifest's optional `versions` command (its libraries)."""
    env = stack.env()
    out = {}
    for cmd in stack.requires:
        line = runtime_version(cmd, cwd=stack.dir, env=env)
        if line:
            out[cmd] = line
    if stack.versions:
        try:
            proc = subprocess.run(["bash", "-c", stack.versions], cwd=stack.dir, env=env, capture_output=True,
                                  text=True, timeout=60, stdin=subprocess.DEVNULL)
            for line in proc.stdout.splitlines():
                name, sep, version = line.partition("=")
                if sep and name.strip():
                    out[name.strip()] = version.strip()
        except subprocess.TimeoutExpired:
            out["versions"] = "the manifest's versions command timed out"
    return out
