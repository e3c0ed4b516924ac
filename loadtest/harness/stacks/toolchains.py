"""Runtimes a stack needs, at a minimum version: `toolchain = { go = "1.26", node = 24, java = 21 }`.

Any runtime with a version command works: the command is looked up on the stack's PATH (its own
`path` directories first), its output's first version number is compared with the minimum as a
version (1.26 > 1.9), and a miss says what was found where. Java is the exception that finds its
own: Debian's default `java` may be older than a stack needs while a newer JDK sits in
/usr/lib/jvm, and the stack should build and run with that one without the user setting anything.
"""
import functools
import os
import pathlib
import re
import shutil
import subprocess

from packaging.version import Version

# Runtimes whose version is not the first version number `<name> --version` prints.
VERSION_COMMANDS = {
    "go": ["go", "version"],                  # `go --version` is an error
    "php": ["php", "-r", "echo PHP_VERSION;"],
    "perl": ["perl", "-e", "print $^V"],      # `perl --version` starts with "perl 5, version 36"
    "erl": ["erl", "-noshell", "-eval", "io:fwrite(erlang:system_info(otp_release)), halt()."],
    "elixir": ["elixir", "-e", "IO.puts(System.version())"],  # `--version` prints Erlang's first
}
VERSION_TIMEOUT = 30  # seconds; a JVM-based launcher on a busy 2-core box takes a few
MINIMUM = re.compile(r"^\d+(\.\d+)*$")
DOTTED = re.compile(r"\d+(?:\.\d+)+")
NUMBER = re.compile(r"\d+")


class ToolchainError(RuntimeError):
    pass


def minimum_version(name: str, value) -> Version:
    """A manifest's minimum: an int (24) or a string ("1.26"). ValueError says how to write it."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        hint = (f' (TOML reads an unquoted 1.20 as the number 1.2: quote the version, like {name} = "1.20")'
                if isinstance(value, float) else "")
        raise ValueError(f"toolchain '{name}': the minimum must be an integer or a string of dotted numbers, "
                         f"not {value!r}{hint}")
    text = str(value).strip()
    if not MINIMUM.match(text):
        raise ValueError(f"toolchain '{name}': {value!r} is not a version (write it like 21 or \"1.26\")")
    return Version(text)


def version_in(output: str) -> Version | None:
    """The first dotted number in a version command's output (go1.26.8, v20.20.2, Python 3.11.7),
    else the first plain number (Erlang's "26")."""
    m = DOTTED.search(output) or NUMBER.search(output)
    return Version(m.group(0)) if m else None


def version_command(name: str) -> list[str]:
    return VERSION_COMMANDS.get(name, [name, "--version"])


def installed_version(name: str, search_path: str) -> tuple[Version, str]:
    """(version, where) of the `name` that PATH `search_path` finds; ToolchainError when there is none."""
    where = shutil.which(name, path=search_path)
    if not where:
        raise ToolchainError(f"{name} not found on PATH")
    command = [where, *version_command(name)[1:]]
    return _run_version(tuple(command), os.stat(where).st_mtime_ns, search_path), where


@functools.cache
def _run_version(command: tuple[str, ...], mtime_ns: int, search_path: str) -> Version:
    """Cached per binary and modification time: a build that replaces the binary is seen."""
    shown = " ".join([pathlib.Path(command[0]).name, *command[1:]])
    try:
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace", timeout=VERSION_TIMEOUT,
                              stdin=subprocess.DEVNULL, env={**os.environ, "PATH": search_path})
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"`{shown}` did not answer within {VERSION_TIMEOUT} s") from None
    except OSError as e:
        raise ToolchainError(f"`{shown}` cannot run: {e.strerror}") from None
    said = (proc.stdout.strip() or proc.stderr.strip() or "nothing").splitlines()[0][:120]
    if proc.returncode != 0:  # an error message has numbers too (line numbers, errno): never read one
        raise ToolchainError(f"`{shown}` failed (exit {proc.returncode}: {said})")
    found = version_in(proc.stdout) or version_in(proc.stderr)  # java -version and python2 print to stderr
    if found is None:
        raise ToolchainError(f"`{shown}` printed no version number ({said})")
    return found


def _jdk_version(home: pathlib.Path) -> Version | None:
    release = home / "release"
    if not (home / "bin" / "javac").exists() or not release.exists():
        return None
    m = re.search(r'^JAVA_VERSION="(\d+(?:\.\d+)*)', release.read_text(errors="replace"), re.M)
    return Version(m.group(1)) if m else None


@functools.cache
def find_jdk(minimum: Version) -> pathlib.Path:
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
                             f"{minimum.major}+) under /usr/lib/jvm or point JAVA_HOME at it")
    # An explicit JAVA_HOME that is good enough wins; otherwise the newest.
    explicit = os.environ.get("JAVA_HOME")
    if explicit and found.get(pathlib.Path(explicit).resolve(), Version("0")) >= minimum:
        return pathlib.Path(explicit).resolve()
    return max(suitable)[1]


def environment(toolchain: dict, stack_dirs: list[str], base_path: str) -> dict[str, str]:
    """PATH (the stack's own directories, then a JDK's bin, then `base_path`) and JAVA_HOME.

    Raises ToolchainError only when `java` is asked for and no JDK is good enough: without one
    nothing can even be built. Every other runtime is checked by `problems`."""
    env = {}
    front = list(stack_dirs)
    if "java" in toolchain:
        home = find_jdk(minimum_version("java", toolchain["java"]))
        env["JAVA_HOME"] = str(home)
        front.append(str(home / "bin"))
    env["PATH"] = os.pathsep.join([*front, base_path] if base_path else front)
    return env


def problems(toolchain: dict, search_path: str) -> list[str]:
    """Why the runtimes found on `search_path` fall short of the manifest's minimums (empty: they don't)."""
    out = []
    for name, value in toolchain.items():
        minimum = minimum_version(name, value)
        try:
            if name == "java":
                find_jdk(minimum)
                continue
            found, where = installed_version(name, search_path)
        except ToolchainError as e:
            out.append(f"needs {name} >= {minimum}: {e}" if name != "java" else str(e))
            continue
        if found < minimum:
            out.append(f"needs {name} >= {minimum} (found {found} at {where})")
    return out
