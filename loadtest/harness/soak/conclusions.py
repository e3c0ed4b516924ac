"""After the last window: GC pauses placed in their windows, the verdicts drawn (or drawn again by this harness)."""
import datetime
import os
import pathlib
import shlex

from harness.accounting import gclog
from harness.bench import machine
from harness.soak import verdicts as soak_verdicts
from harness.soak.settings import THRESHOLD_KNOBS, thresholds_from


def gc_logs_kept(doc: dict, out_dir: pathlib.Path) -> bool:
    """Whether out_dir still holds the runtime's GC log (a results.json copied alone does not)."""
    if doc["gc"]["runtime"] == "jvm":
        return any((out_dir / "raw" / "gc").glob("gc-*.log"))
    return doc["gc"]["runtime"] == "node" and (out_dir / "raw" / "stack-run.log").exists()


def conclude(doc: dict, out_dir: pathlib.Path, th: soak_verdicts.Thresholds, read_gc: bool = True) -> None:
    """GC pauses read from the logs and placed in the windows; the verdicts; the flags of each window.
    `read_gc` False keeps the pauses already in doc (re-judging a soak whose logs are gone)."""
    gc = doc["gc"]
    started = {int(p): s for p, s in doc.get("processes", {}).items()}
    if gc["runtime"] in ("jvm", "node") and doc.get("soak_started") and read_gc:
        pauses, gc["unreadable_lines"] = gclog.read(gc["runtime"], out_dir / "raw" / "gc", out_dir / "raw" / "stack-run.log",
                                                    started)
        gc["available"] = bool(pauses) or gc["runtime"] == "jvm" and any((out_dir / "raw" / "gc").glob("gc-*.log"))
        gc["why_not"] = None if gc["available"] else "the runtime's GC log holds no line (did the stack start its runtime?)"
        t0 = doc["soak_started"]
        end = t0 + sum(w["seconds"] for w in doc["windows"])
        # Pauses during the warm-up are left out: the soak's verdicts are about the soak.
        gc["pauses"] = [[None if p.t is None else round(p.t - t0, 3), p.ms, p.kind, p.pid]
                        for p in pauses if p.t is None or t0 <= p.t < end]
        gc["before_soak"] = sum(1 for p in pauses if p.t is not None and p.t < t0)
        lead = doc.get("lead_in")
        if lead:
            during = [p.ms for p in pauses if p.t is not None and t0 + lead["t_s"] <= p.t < t0]
            lead.update(gc_pauses=len(during) if gc["available"] else None,
                        gc_longest_ms=max(during, default=0.0) if gc["available"] else None)
    elif not doc.get("soak_started"):
        gc["why_not"] = gc["why_not"] or "the soak never reached its load"
    for w in doc["windows"]:
        inside = [p for p in gc["pauses"] if p[0] is not None and w["t_s"] <= p[0] < w["t_s"] + w["seconds"]]
        w["gc_pauses"] = len(inside) if gc["available"] else None
        w["gc_total_ms"] = round(sum(p[1] for p in inside), 3) if gc["available"] else None
        w["gc_longest_ms"] = max((p[1] for p in inside), default=0.0) if gc["available"] else None
    # A soak recorded before lead-ins existed has no "lead_in" key: its first window was the start of the load.
    first_is_lead_in = "lead_in" not in doc
    doc["verdicts"] = soak_verdicts.judge(doc["windows"], gc["pauses"], gc["available"], gc["why_not"], th,
                                          doc.get("exited"), doc.get("lead_in"), first_is_lead_in)
    threshold = doc["verdicts"]["latency"]["threshold_ms"]
    lead_ins = [doc["lead_in"]] if doc.get("lead_in") else doc["windows"][:1] if first_is_lead_in else []
    for w in ([doc["lead_in"]] if doc.get("lead_in") else []) + doc["windows"]:
        flags = soak_verdicts.window_flags(w, threshold, th)
        if any(w is x for x in lead_ins):
            flags = ["lead-in"] + [f for f in flags if f == "errors"]
        w["flags"] = (flags + (["disturbed"] if w.get("disturbed") else [])
                      + (["generator-saturated"] if w.get("generator_saturated") else []))
    doc["complete"] = bool(doc["windows"]) and not doc.get("interrupted") and not doc.get("refused") and not doc.get("exited") \
        and len(doc["windows"]) == (doc.get("plan") or {}).get("windows")


def thresholds_for(doc: dict, env=None) -> soak_verdicts.Thresholds:
    """The thresholds to judge a stored soak by: this harness's defaults; over them the ones the
    soak's own command set (LEAK_MIB_PER_H=... given to make soak is part of what was asked, and
    SoakSettings.command writes only those that differ from the defaults); over them the ones `env`
    sets (make report RESULTS=... STALL_FLOOR_MS=100)."""
    try:
        words = shlex.split(doc.get("command") or "")
    except ValueError:
        words = []
    asked = dict(w.split("=", 1) for w in words if "=" in w)
    th = thresholds_from({name: asked[name] for _, name, _ in THRESHOLD_KNOBS if name in asked},
                         soak_verdicts.Thresholds())
    return thresholds_from(os.environ if env is None else env, th)


def rejudge(doc: dict, out_dir: pathlib.Path, env=None) -> dict | None:
    """The verdicts of a stored soak drawn again from its windows with this harness's code and
    thresholds (thresholds_for), the GC pauses read again from raw/gc when the logs are still there.
    The verdicts it was saved with are kept once, as `verdicts_as_run`; `rejudged` says when, by
    which commit, and the flags before. Returns that record (None: nothing was measured to judge)."""
    if doc.get("verdicts") is None or not doc.get("windows"):
        return None
    before = list(doc["verdicts"].get("flags") or [])
    doc.setdefault("verdicts_as_run", doc["verdicts"])
    th = thresholds_for(doc, env)
    conclude(doc, out_dir, th, read_gc=gc_logs_kept(doc, out_dir))
    doc["rejudged"] = {"at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "git": machine.git(), "flags_before": before, "flags": doc["verdicts"]["flags"],
                       "flags_as_run": doc["verdicts_as_run"].get("flags") or []}
    return doc["rejudged"]
