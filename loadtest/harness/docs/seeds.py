"""The seeds' questions: each claim of the five articles this project grew from (`../shared/seeds/`),
the command that tests it here, and the answer, generated from committed result files.

A claim's evidence is a committed `make ab` result (a stack's `tuning/*.json`: B against A), the
newest published run (two stacks side by side, or one stack's load profile), or a soak's dated
entry in a stack's NOTES.md (where the soaks' figures are kept, with their run ids). Evidence that is not
committed yet says so, with its command: no figure here is typed.
"""
import json
import os
import pathlib
from dataclasses import dataclass

from harness.bench import profiles
from harness.docs import published
from harness.reports import report_md

BEGIN, END = "<!-- seeds:begin -->", "<!-- seeds:end -->"


@dataclass(frozen=True)
class Ab:
    """A committed `make ab` result: what B is against A."""
    path: str  # under the repository's root
    what: str


@dataclass(frozen=True)
class Pair:
    """Two stacks of the newest published run, on some endpoints: a's headline req/s over b's."""
    a: str
    b: str
    endpoints: tuple


@dataclass(frozen=True)
class Churn:
    """The churn profile of the newest published run, on some stacks."""
    stacks: tuple


@dataclass(frozen=True)
class Notes:
    """A dated investigation in a stack's NOTES.md (its soaks keep their figures there, with their run ids)."""
    path: str
    anchor: str
    what: str


@dataclass(frozen=True)
class Seed:
    name: str
    claim: str
    commands: tuple
    evidence: tuple
    differs: str  # what this machine cannot reproduce of the seed's setting


SEEDS = (
    Seed("000", "PHP beat a single Tomcat JVM; pool locks were the bottleneck; without a pool, a fifth of the "
                "throughput",
         ("make bench-all", "make ab STACK=java-tomcat ENDPOINT=mysql A='' B=SPRING_DATASOURCE_HIKARI_MAXIMUMPOOLSIZE=64",
          "make ab STACK=java-tomcat ENDPOINT=mysql A='' B=BACKEND_MYSQL_MISTAKE=connection-per-request"),
         (Pair("php-fpm", "java-tomcat", ("redis", "mysql", "memcache")),
          Ab("java-tomcat/tuning/hikari-pool.json", "a pool of 64 against 16"),
          Ab("java-tomcat/tuning/seed-no-pool.json", "a new connection per request against the pool")),
         "one server core; the seed's Tomcat had 4 CPUs, its client a machine of its own"),
    Seed("001", "a 10 ms blocking sleep made Netty six times slower than Swoole's coroutines",
         ("make ab STACK=java-netty ENDPOINT=sleep A='' B=SLEEP_MISTAKE=block-event-loop",),
         (Ab("java-netty/tuning/seed-blocking-sleep.json", "the event loop blocked for 10 ms against a timer"),
          Pair("php-swoole", "java-netty", ("sleep",))),
         "Netty's event loops are as many as server cores: one here"),
    Seed("002", "node with cluster and generic-pool beat node alone and PHP",
         ("make ab STACK=node-cluster ENDPOINT=mysql A=MYSQL_POOL_SIZE=1 B=''",),
         (Pair("node-cluster", "php-fpm", ("redis", "mysql", "memcache")),
          Ab("node-cluster/tuning/seed-mysql-one-connection.json", "the MySQL pool against one connection")),
         "one server core: one worker per core is node alone; the seed's 3,000 to 7,000 clients: `PROFILE=many`"),
    Seed("003", "t-io against Voovan with a connection per request; t-io failed at 100 clients",
         ("make bench STACK=java-tio,java-voovan PROFILE=churn",),
         (Churn(("java-tio", "java-voovan")),),
         "ab's connection per request is the churn profile; one wrk core caps it near 10,000 conn/s"),
    Seed("004", "Tomcat's heap filled and full GCs of 10 to 86 s came after 17 to 34 minutes",
         ("make soak STACK=java-tomcat ENDPOINT=redis DURATION=1800",
          "make ab STACK=java-tomcat ENDPOINT=redis A='' B=\"TOMCAT_HEAP='-Xms64m -Xmx512m'\""),
         (Notes("java-tomcat/NOTES.md", "2026-11-26-heap--xms512m--xmx512m-garbage-tenured-160-times-slower-rss-flat-in-a-30-minute-redis-soak",
                "the 30-minute soaks of this stack's heap"),
          Ab("java-tomcat/tuning/heap.json", "a growing heap (-Xms64m -Xmx512m) against this stack's fixed one")),
         "soaks of 30 minutes at half the peak; the seed's ran for hours on 4 CPUs"),
)


def _link(readme: pathlib.Path, target: pathlib.Path, text: str) -> str:
    return f"[{text}]({os.path.relpath(target, readme.parent)})"


def ab_answer(root: pathlib.Path, readme: pathlib.Path, ev: Ab) -> str:
    path = root / ev.path
    if not path.exists():
        return f"{ev.what}: not measured yet"
    doc = json.loads(path.read_text())
    f = doc["summary"]["figures"]
    rps, cpu = f["throughput_rps"], f["cpu_us_per_request"]
    ratio = rps["b"]["median"] / rps["a"]["median"] if rps["a"]["median"] else None
    return (f"{ev.what}: req/s ×{ratio:.2f} ({_verdict(rps)}), CPU µs/req {cpu['a']['median']:.0f} → "
            f"{cpu['b']['median']:.0f} ({_verdict(cpu)}) " + _link(readme, path, "[ab]"))


def _verdict(figure: dict) -> str:
    """`make ab`'s verdict in a word: real, or noise (within the noise of that sitting)."""
    return "real" if figure["word"].startswith("real") else "noise"


def pair_answer(readme: pathlib.Path, run: published.Run | None, ev: Pair) -> str:
    if run is None:
        return f"{ev.a} against {ev.b}: no published run yet"
    by = {s["name"]: s for s in run.doc["stacks"]}
    cells = []
    for e in ev.endpoints:
        a, b = (((by.get(name) or {}).get("endpoints") or {}).get(e) for name in (ev.a, ev.b))
        if a and b and b["headline"]["throughput_rps"]["median"]:
            cells.append(f"/{e} ×{a['headline']['throughput_rps']['median'] / b['headline']['throughput_rps']['median']:.2f}")
    got = ", ".join(cells) or "not in that run"
    return f"{ev.a} req/s over {ev.b}'s: {got} " + _link(readme, run.path / "report.html", "[run]")


def churn_answer(readme: pathlib.Path, run: published.Run | None, ev: Churn) -> str:
    """Connections per second with a new connection for every request, per stack at each client count
    of the churn profile, with the errors and flags of those runs."""
    runs = [r for r in profiles.PROFILES["churn"].runs if r.shape.close_every == 1]
    parts = []
    for s in (run.doc["stacks"] if run else []):
        if s["name"] not in ev.stacks:
            continue
        by_label = {rec["profile_run"]: rec for rec in ((s.get("profiles") or {}).get("churn") or {}).get("runs", [])}
        recs = [by_label.get(r.label) for r in runs]
        if not any(recs):
            continue
        errors = sum(sum((rec.get("errors") or {}).values()) for rec in recs if rec)
        flags = sorted({f for rec in recs if rec for f in rec.get("flags", [])})
        parts.append(f"{s['name']} " + " / ".join(report_md.fmt_rps(rec.get("connections_per_s")) if rec else "–"
                                                  for rec in recs)
                     + f", errors {errors:,}" + (f" ⚑ {' '.join(flags)}" if flags else ""))
    if not parts:
        return "the churn profile: not in a published run yet"
    clients = " / ".join(str(r.connections) for r in runs)
    return (f"conn/s, a new connection per request, at {clients} clients: " + "; ".join(parts) + " "
            + _link(readme, run.path / "report.html", "[run]"))


def answer(root: pathlib.Path, readme: pathlib.Path, run: published.Run | None, ev) -> str:
    if isinstance(ev, Ab):
        return ab_answer(root, readme, ev)
    if isinstance(ev, Pair):
        return pair_answer(readme, run, ev)
    if isinstance(ev, Notes):
        return f"[{ev.what}]({os.path.relpath(root / ev.path, readme.parent)}#{ev.anchor})"
    return churn_answer(readme, run, ev)


def block(root: pathlib.Path, readme: pathlib.Path, runs: list[published.Run]) -> str:
    run = runs[0] if runs else None
    rows = [[s.name, s.claim, "<br>".join(f"`{c}`" for c in s.commands),
             "<br>".join(answer(root, readme, run, ev) for ev in s.evidence), s.differs] for s in SEEDS]
    return ("Generated by `make publish` from the results each answer links ([run]: the newest published run; "
            "[ab]: a `make ab`, real or within its noise); do not edit.\n\n"
            + report_md.table(["seed", "its claim", "the command here", "the answer measured here", "what differs"], rows))
