"""GC pauses from the runtime's own logs, for `make soak`: how to switch the log on for a stack, and
how to read the pauses (wall-clock time, duration, kind) back out of it.

- JVM: unified logging (JEP 158), appended to JAVA_TOOL_OPTIONS, which every `java` the stack's run
  line starts reads before its command line. Tags `gc` (every collector's "Pause ..." line: Serial,
  Parallel, G1, Shenandoah) and `gc+phases` (ZGC writes its pauses there), decorated with the UTC
  time, one file per JVM (`%p`), never rotated (`filecount=0`: the default keeps five 20 MB files
  and drops the oldest, which an hour's log could reach).
- Node: V8's `--trace-gc`. Node refuses it in NODE_OPTIONS ("--trace-gc is not allowed in
  NODE_OPTIONS"), so NODE_OPTIONS gets `--require node_trace_gc.cjs`, which calls
  `v8.setFlagsFromString('--trace-gc')` (the example of Node's own v8 docs); every cluster worker
  inherits NODE_OPTIONS. V8 prints one line per collection to stdout, the stack's log, stamped with
  the pid and the milliseconds since that process's isolate started; the harness places them in
  wall-clock time from the process's start time (psutil), within a few tens of milliseconds.
- PHP: no stop-the-world log exists. PHP frees by reference counting as it goes, and its cycle
  collector runs inside whichever request crosses the root-buffer threshold; `gc_status()` counts
  runs from inside the process only. A PHP soak reports "no GC log", never zero pauses.
"""
import datetime
import pathlib
import re
from dataclasses import asdict, dataclass

NODE_PRELOAD = pathlib.Path(__file__).resolve().with_name("node_trace_gc.cjs")
JVM_TAGS = "gc,gc+phases"
JVM_DECORATIONS = "utctime,uptime,level,tags"

NO_GC_LOG = {
    "php": "no GC log: PHP frees by reference counting as it goes, and its cycle collector runs inside the "
           "request that fills the root buffer (gc_status() counts runs from inside the process); there is "
           "no stop-the-world collector to log",
    "unknown": "no GC log: the harness knows how to read the JVM's unified GC log and V8's --trace-gc only",
}


@dataclass(frozen=True)
class Pause:
    t: float | None   # wall-clock start, seconds since the epoch (None: could not be placed)
    ms: float         # how long the process (JVM: every Java thread; V8: the isolate's thread) was stopped
    kind: str         # "Pause Young (Allocation Failure)", "Scavenge", "Mark-Compact", ...
    pid: int | None

    def as_dict(self) -> dict:
        return asdict(self)


def runtime(stack) -> str:
    """jvm, node, php or unknown: from the manifest's toolchain, else its language."""
    tools = {k.lower() for k in (stack.toolchain or {})}
    language = (stack.language or "").lower()
    if "java" in tools or language in ("java", "kotlin", "scala"):
        return "jvm"
    if "node" in tools or language in ("javascript", "typescript"):
        return "node"
    if "php" in tools or language == "php":
        return "php"
    return "unknown"


class GcLogError(ValueError):
    """A log path the runtime's option syntax cannot carry."""


def jvm_option(log_dir: pathlib.Path) -> str:
    path = str(pathlib.Path(log_dir).absolute() / "gc-%p.log")
    # JAVA_TOOL_OPTIONS splits on white space and -Xlog's own syntax splits on ':' and ','.
    if re.search(r"[\s:,\"']", path):
        raise GcLogError(f"the JVM's -Xlog:...:file= cannot take the path {path!r} (white space, ':', ',' or a "
                         "quote in it): give the results another directory with RESULTS_DIR=")
    return f"-Xlog:{JVM_TAGS}:file={path}:{JVM_DECORATIONS}:filecount=0"


def node_quote(path: str) -> str:
    """NODE_OPTIONS splits on white space and takes double quotes with backslash escapes (not single ones)."""
    if not re.search(r'[\s"\'\\]', path):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def environment(kind: str, log_dir: pathlib.Path, env: dict) -> dict:
    """The variables to add to a stack's environment (`env`: what it already gets) to log its GC."""
    if kind == "jvm":
        return {"JAVA_TOOL_OPTIONS": " ".join(x for x in (env.get("JAVA_TOOL_OPTIONS", ""), jvm_option(log_dir)) if x)}
    if kind == "node":
        return {"NODE_OPTIONS": " ".join(x for x in (env.get("NODE_OPTIONS", ""),
                                                      f"--require {node_quote(str(NODE_PRELOAD))}") if x)}
    return {}


# [2026-11-24T02:21:06.809+0000][12.345s][info][gc] GC(3) Pause Young (Allocation Failure) 17M->2M(61M) 1.234ms
JVM_TIME = re.compile(r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+[+-]\d{4})\]")
JVM_PAUSE = re.compile(r"\bGC\(\d+\)\s+(?:[yo]: )?(Pause\b.*?)\s+(\d+(?:\.\d+)?)ms\s*$")
HEAP_CHANGE = re.compile(r"\s+\d+[KMGT]?(?:\(\d+%\))?->\d+[KMGT]?.*$")


def parse_jvm(lines, pid: int | None = None) -> list[Pause]:
    out = []
    for line in lines:
        m = JVM_PAUSE.search(line)
        if not m:
            continue
        t = JVM_TIME.search(line)
        when = datetime.datetime.strptime(t.group(1), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() if t else None
        out.append(Pause(when, float(m.group(2)), HEAP_CHANGE.sub("", m.group(1)).strip(), pid))
    return out


# [5425:0x2651d000]       32 ms: Scavenge 5.2 (6.3) -> 4.7 (7.3) MB, pooled: 0 MB, 1.01 / 0.00 ms  (average mu ...
NODE_LINE = re.compile(r"^\[(\d+):0x[0-9a-fA-F]+\]\s+(\d+(?:\.\d+)?) ms: (.+?) [\d.]+ \([\d.]+\) -> [\d.]+ \([\d.]+\) MB, "
                       r"(?:pooled: [\d.]+ MB, )?(\d+(?:\.\d+)?) / [\d.]+ ms")


def parse_node(lines, started: dict[int, float]) -> list[Pause]:
    """`started`: pid -> its start time (epoch seconds); a pid missing from it gives t None."""
    out = []
    for line in lines:
        m = NODE_LINE.search(line)
        if not m:
            continue
        pid = int(m.group(1))
        t0 = started.get(pid)
        out.append(Pause(None if t0 is None else t0 + float(m.group(2)) / 1000, float(m.group(4)), m.group(3), pid))
    return out


def _lines(path: pathlib.Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except FileNotFoundError:
        return []


NODE_LIKE = re.compile(r"\[\d+:0x[0-9a-fA-F]+\]\s+\d+(?:\.\d+)? ms: ")


def unreadable_node_lines(lines) -> int:
    """Lines that start like a --trace-gc line but do not parse: every worker writes its own stdout
    buffer into the one log, and a buffer can end mid-line, so another's may cut a line in two."""
    return sum(1 for line in lines if NODE_LIKE.search(line) and not NODE_LINE.search(line))


def read(kind: str, log_dir: pathlib.Path, stack_log: pathlib.Path | None, started: dict[int, float]) -> tuple[list[Pause], int]:
    """Every pause logged so far, in time order (unplaced ones last), and how many GC lines could not be read."""
    unreadable = 0
    if kind == "jvm":
        pauses = []
        for f in sorted(pathlib.Path(log_dir).glob("gc-*.log")):
            pid = f.stem.split("-", 1)[1]
            pauses += parse_jvm(_lines(f), int(pid) if pid.isdigit() else None)
    elif kind == "node" and stack_log is not None:
        lines = _lines(stack_log)
        pauses, unreadable = parse_node(lines, started), unreadable_node_lines(lines)
    else:
        return [], 0
    return sorted(pauses, key=lambda p: (p.t is None, p.t or 0)), unreadable
