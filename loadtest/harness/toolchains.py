"""Finding a runtime of at least the version a manifest asks for (`toolchain = { java = 21 }`).

Debian's default `java` may be older than a stack needs while a newer JDK sits in /usr/lib/jvm;
the stack should build and run with that one without the user setting anything.
"""
import functools
import os
import pathlib
import re
import shutil
import subprocess


class ToolchainError(RuntimeError):
    pass


def _jdk_version(home: pathlib.Path) -> int | None:
    release = home / "release"
    if not (home / "bin" / "javac").exists() or not release.exists():
        return None
    m = re.search(r'^JAVA_VERSION="(\d+)', release.read_text(errors="replace"), re.M)
    return int(m.group(1)) if m else None


@functools.cache
def find_jdk(minimum: int) -> pathlib.Path:
    candidates = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(pathlib.Path(os.environ["JAVA_HOME"]))
    javac = shutil.which("javac")
    if javac:
        candidates.append(pathlib.Path(javac).resolve().parents[1])
    candidates += sorted(pathlib.Path("/usr/lib/jvm").glob("*"))
    found = {}
    for home in candidates:
        version = _jdk_version(home.resolve())
        if version is not None:
            found.setdefault(home.resolve(), version)
    suitable = [(v, h) for h, v in found.items() if v >= minimum]
    if not suitable:
        seen = ", ".join(f"{h} ({v})" for h, v in found.items()) or "none"
        raise ToolchainError(f"needs a JDK >= {minimum} (found: {seen}); install one (for example Temurin "
                             f"{minimum}+) under /usr/lib/jvm or point JAVA_HOME at it")
    # An explicit JAVA_HOME that is good enough wins; otherwise the newest.
    explicit = os.environ.get("JAVA_HOME")
    if explicit and found.get(pathlib.Path(explicit).resolve(), 0) >= minimum:
        return pathlib.Path(explicit).resolve()
    return max(suitable)[1]


@functools.cache
def node_major() -> int | None:
    node = shutil.which("node")
    if not node:
        return None
    out = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    m = re.match(r"v(\d+)", out)
    return int(m.group(1)) if m else None


def environment(toolchain: dict) -> dict[str, str]:
    """Environment additions that put the requested runtimes first; ToolchainError if one is missing."""
    env = {}
    for name, minimum in toolchain.items():
        if name == "java":
            home = find_jdk(int(minimum))
            env["JAVA_HOME"] = str(home)
            env["PATH"] = f"{home / 'bin'}:{os.environ.get('PATH', '')}"
        elif name == "node":
            major = node_major()
            if major is None or major < int(minimum):
                raise ToolchainError(f"needs Node.js >= {minimum} (found: {major or 'none'})")
        else:
            raise ToolchainError(f"unknown toolchain '{name}' (known: java, node)")
    return env
