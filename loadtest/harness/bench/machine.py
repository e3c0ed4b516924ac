"""What the run ran on and with: the machine, the tools' and the stacks' versions, the git commit."""
import datetime
import os
import platform
import re
import shutil
import subprocess

from harness.config import ROOT
from harness.stacks import toolchains


def _first_line(cmd: list[str], cwd=None, env=None, timeout=15, require_ok=False) -> str | None:
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if require_ok and proc.returncode != 0:
        return None
    text = ANSI.sub("", (proc.stdout or proc.stderr)).strip()
    return text.splitlines()[0].strip() if text else None


ANSI = re.compile(r"\x1b\[[0-9;]*m")  # mvn colours its version line


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
    """Libraries from the stack's lock files, the runtime of every command it requires
    (`<cmd> --version`), and the name=version lines of its manifest's optional `versions` command."""
    env = stack.env()
    out = dict(library_versions(stack.dir))
    # The runtimes its toolchain selects (with the stack's own PATH/JAVA_HOME), then its required commands.
    for cmd in [*stack.toolchain, *[c for c in stack.requires if c not in stack.toolchain]]:
        own = toolchains.version_command(cmd)  # `go version` has no --version
        line = (_first_line(own, cwd=stack.dir, env=env, require_ok=True) if cmd in toolchains.VERSION_COMMANDS
                else None) or runtime_version(cmd, cwd=stack.dir, env=env)
        if line:
            out[cmd] = line
    if stack.versions:
        try:
            proc = stack.shell(stack.versions, env=env, capture_output=True, text=True, timeout=60)
            for line in proc.stdout.splitlines():
                name, sep, version = line.partition("=")
                if sep and name.strip():
                    out[name.strip()] = version.strip()
            if proc.returncode != 0:
                said = (proc.stderr.strip().splitlines() or [""])[-1]
                out["versions"] = f"the manifest's versions command failed (exit {proc.returncode}): {said}".rstrip(": ")
        except subprocess.TimeoutExpired:
            out["versions"] = "the manifest's versions command timed out"
    return out


def _package_lock(path) -> dict:
    """The direct dependencies of a package-lock.json (v2/v3), as installed."""
    import json
    doc = json.loads(path.read_text())
    packages = doc.get("packages", {})
    root = packages.get("", {})
    direct = {**root.get("dependencies", {}), **root.get("optionalDependencies", {})}
    return {name: packages.get(f"node_modules/{name}", {}).get("version", spec) for name, spec in direct.items()}


def _composer_lock(path) -> dict:
    import json
    doc = json.loads(path.read_text())
    return {p["name"]: p["version"] for p in doc.get("packages", [])}


def _pom(path) -> dict:
    """Dependencies (and the parent) of a pom.xml with their versions, ${properties} resolved."""
    import xml.etree.ElementTree as ET
    root = ET.parse(path).getroot()
    for el in root.iter():  # drop the POM namespace so that plain tag names match
        el.tag = el.tag.split("}")[-1]
    props = {p.tag: (p.text or "").strip() for p in root.findall("properties/*")}

    def resolve(text):
        return re.sub(r"\$\{([^}]+)\}", lambda m: props.get(m.group(1), m.group(0)), (text or "").strip())
    out = {}
    parent = root.find("parent")
    if parent is not None and parent.findtext("version"):
        out[resolve(parent.findtext("artifactId"))] = resolve(parent.findtext("version"))
    for dep in root.iter("dependency"):
        if dep.findtext("version"):
            out[resolve(dep.findtext("artifactId"))] = resolve(dep.findtext("version"))
    for plugin in root.iter("plugin"):
        if plugin.findtext("version"):
            out[resolve(plugin.findtext("artifactId"))] = resolve(plugin.findtext("version"))
    return out


LOCK_FILES = {"package-lock.json": _package_lock, "composer.lock": _composer_lock, "pom.xml": _pom}


def library_versions(stack_dir) -> dict:
    """Library versions read generically from the lock/build files a stack commits (no stack has to
    declare them): package-lock.json, composer.lock, pom.xml."""
    import pathlib
    out = {}
    for name, reader in LOCK_FILES.items():
        path = pathlib.Path(stack_dir) / name
        if path.exists():
            try:
                out.update(reader(path))
            except Exception as e:  # noqa: BLE001 - a lock file we cannot read is reported, not fatal
                out[name] = f"unreadable: {e}"
    return out


def run_header(schema: str, version: int, started_at) -> dict:
    """What every run's document opens with (bench, multi-host, ab, soak): which document, when, on
    what, from which commit; finished and complete are set when it ends."""
    return {"schema": schema, "schema_version": version, "started": started_at.isoformat(timespec="seconds"),
            "finished": None, "complete": False, "git": git(), "machine": describe(), "loadavg_start": loadavg()}


def run_footer(doc: dict, started_at) -> dict:
    """What every run's document closes with, however it ended: when, how long, the load then."""
    finished = datetime.datetime.now(datetime.timezone.utc)
    doc.update(finished=finished.isoformat(timespec="seconds"),
               duration_s=round((finished - started_at).total_seconds(), 1), loadavg_end=loadavg())
    return doc
