"""Command line of the harness: `python -m harness <command>` (the Makefile's targets call these).

The heavier packages (bench, reports, ab, soak, the multi-host run) are imported by the commands that
use them, so that `make list` and each `on-host` call over ssh start quickly; no cycle needs it."""
import argparse
import os
import signal
import subprocess
import sys

from harness import hosts, provision, services, skeleton, stacks, verify
from harness.bench import knobs
from harness.config import ROOT, SERVICES, external_services


def cmd_services_up(args) -> int:
    services.up()
    return 0


def cmd_services_down(args) -> int:
    services.down()
    return 0


def cmd_services_status(args) -> int:
    for name in SERVICES:
        print(f"{name:9} {services.status(name)}")
    return 0


def cmd_list(args) -> int:
    for s in stacks.select(args.stack):
        declared = f"; declares {len(s.deviations)} known deviation{'s' if len(s.deviations) != 1 else ''}" \
            if s.deviations else ""
        print(f"{s.name:14} {s.language:11} {s.framework:40} port {s.port:<6} {s.availability()}{declared}")
    return 0


def _available(selected, skipped: dict | None = None):
    """The stacks this machine can build; a toolchain that only the build provides is checked after it.
    The others go into `skipped` (name -> reason) so that a summary can name them."""
    ready = []
    for s in selected:
        found = s.availability()
        if not found.buildable:
            print(f"*** {s.name}: {found} -- SKIPPED ***", file=sys.stderr)
            if skipped is not None:
                skipped[s.name] = str(found)
            continue
        if found.after_build:
            print(f"{s.name}: {found}", flush=True)
        ready.append(s)
    return ready


def cmd_build(args) -> int:
    failed = []
    for s in _available(stacks.select(args.stack)):
        print(f"{s.name}: building ...", flush=True)
        try:
            stacks.build(s)
            print(f"{s.name}: built")
        except stacks.StackError as e:
            print(e, file=sys.stderr)
            failed.append(s.name)
    if failed:
        print(f"build failed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


def cmd_verify(args) -> int:
    selected, skipped = stacks.select(args.stack), {}
    ok = verify.verify_all(_available(selected, skipped), build_first=not args.no_build, skipped=skipped)
    return 0 if ok else 1


def cmd_run(args) -> int:
    from harness.bench.settings import with_port_offset
    (stack,) = with_port_offset(stacks.select(args.stack))  # a multi-host run's server host honours it too
    reason = stack.unavailable_reason()
    if reason:
        print(f"{stack.name}: unavailable: {reason}", file=sys.stderr)
        return 1
    with stacks.start(stack) as running:
        print(f"{stack.name} is serving {stack.url} (pid {running.pid}, log {running.log}); Ctrl-C stops it")
        try:
            running.proc.wait()
        except KeyboardInterrupt:
            pass
    return 0


def cmd_test(args) -> int:
    """Everything `make test` proves, stopping afterwards only the services it started itself."""
    started, skipped = services.up(), {}
    try:
        available = _available(stacks.discover(), skipped)
        verified = verify.verify_all(available, build_first=True, skipped=skipped)
        unit_failed = _unit_tests(available, build_first=False)
        provision.ensure_oha()  # started in the background by `make setup`; the open-loop tests need it
        print("\n== harness tests (pytest, against the real services)", flush=True)
        tests = subprocess.run([sys.executable, "-m", "pytest", "-q", str(ROOT / "loadtest" / "tests")],
                               cwd=ROOT / "loadtest").returncode
    finally:
        services.up()
        services.down(started)
    if not verified:
        print("make test: verification FAILED", file=sys.stderr)
    for name, known in verified.deviations.items():
        if not verified[name]:
            continue  # failed: said above
        # Accepted, never passed: the end line says so, with what the stack's manifest declares.
        print(f"make test: {name} verified with {len(known)} known deviation{'s' if len(known) != 1 else ''} "
              f"(declared in its stack.toml, see above): " + "; ".join(f"{d['case']} -> {d['observed']}" for d in known),
              file=sys.stderr)
    if skipped:
        # Not a failure (a machine may lack a runtime), but never silent: these stacks were not proven here.
        print(f"make test: NOT verified on this machine: {', '.join(skipped)} (unavailable; see above)", file=sys.stderr)
    if unit_failed:
        print(f"make test: the unit tests of {', '.join(unit_failed)} FAILED (see above)", file=sys.stderr)
    return 0 if verified and tests == 0 and not unit_failed else 1


def _unit_tests(selected, build_first: bool) -> list[str]:
    """Each stack's own unit tests (its manifest's `test`); the names of those that failed."""
    failed = []
    for s in [s for s in selected if s.test]:
        print(f"\n== {s.name}: unit tests ({s.test})", flush=True)
        try:
            if build_first:
                stacks.build(s)
            stacks.unit_test(s)
            print(f"{s.name}: unit tests passed (log: {stacks.log_path(s, 'test')})")
        except stacks.StackError as e:
            print(e, file=sys.stderr)
            failed.append(s.name)
    return failed


def cmd_unit(args) -> int:
    failed = _unit_tests(_available(stacks.select(args.stack)), build_first=True)
    return 1 if failed else 0


def cmd_bench(args) -> int:
    from harness.accounting import cpus
    from harness.bench import run, settings
    from harness.hosts import multihost
    cfg = settings.Settings.from_env()
    if cfg.open_rates and not provision.ensure_oha(wait=not cfg.quick) and cfg.quick:
        print("bench: oha is still building in the background (started by `make setup`): this QUICK pass does not "
              "wait for it", file=sys.stderr)  # the run itself then says that its open-loop runs are skipped
    selected = settings.with_port_offset(stacks.select(cfg.stacks or None))
    if hosts.configured():
        try:
            roles = hosts.roles_from_env(all_services_external=external_services() == set(SERVICES))
        except hosts.HostError as e:
            print(f"bench: {e}", file=sys.stderr)
            return 2
        bench = multihost.MultiHostBench(cfg, roles)
    else:
        bench = run.Bench(cfg, cpus.Layout.from_env())
    try:
        out = bench.run(selected)
    except KeyboardInterrupt:
        print(f"\nbench: interrupted; what it finished is in {bench.dir} (reports included)", file=sys.stderr)
        return 130
    # Unavailable stacks are expected on some machines; a stack that failed or broke off is not.
    broken = [s["name"] for s in results_of(out)["stacks"] if s.get("status") in ("failed", "error")]
    if broken:
        print(f"bench: not benchmarked because they failed: {', '.join(broken)} (see the report)", file=sys.stderr)
    return 1 if broken else 0


def results_of(path):
    from harness.reports import results
    return results.read(path)


def cmd_report(args) -> int:
    from harness import soak
    from harness.bench import run
    if soak.is_soak(args.results):
        try:
            out = soak.report_again(soak.results_dir(args.results))
        except knobs.Usage as e:
            print(f"report: {e}", file=sys.stderr)
            return 2
    else:
        out = run.render(args.results)
    print(f"rendered {out / 'report.md'} and {out / 'report.html'}")
    return 0


def cmd_publish(args) -> int:
    from harness.docs import publish
    return publish.main(ROOT, args.run or None)


def cmd_docs(args) -> int:
    from harness.docs import check
    return check.main(["--root", str(ROOT)])


def cmd_new_stack(args) -> int:
    try:
        where, port = skeleton.create(args.name.strip())
    except skeleton.SkeletonError as e:
        print(f"new-stack: {e}", file=sys.stderr)
        return 2
    name = where.name
    print(f"wrote {where}/: stack.toml (port {port}), README.md, .gitignore, server.py (a placeholder)\n"
          f"next: make verify STACK={name}   (the placeholder passes the /hello cases and fails the rest:\n"
          f"      that is what is left to do); then replace server.py with your framework's server.\n"
          f"      README.md, \"Adding a stack\": the manifest's keys and the traps every stack here met.")
    return 0


def cmd_ab(args) -> int:
    from harness import ab
    if os.environ.get("OPEN_RATE"):
        provision.ensure_oha()  # the open-loop run of each round
    return ab.main()


def cmd_soak(args) -> int:
    from harness import soak
    provision.ensure_oha()  # the soak's load is oha's
    return soak.main()


def cmd_compare(args) -> int:
    from harness import compare
    return compare.main(args.old, args.new, args.out)


def cmd_setup(args) -> int:
    return provision.setup([] if args.harness_only else stacks.select(args.stack))


def cmd_sim_hosts(args) -> int:
    from harness.hosts import simulated as simhosts
    try:
        if args.action == "up":
            line = simhosts.up()
            print(f"simulated hosts up: {', '.join(f'{h.alias} {h.address}' for h in simhosts.hosts())}\n"
                  f"a run across them: make bench-all {line} HOSTS_CHECKOUT={ROOT}")
        else:
            removed = simhosts.down()
            print(f"simulated hosts down ({len(removed)} removed)")
    except simhosts.SimHostsError as e:
        print(f"sim-hosts: {e}", file=sys.stderr)
        return 2
    return 0


def cmd_on_host(args) -> int:
    """Called over ssh by a multi-host run (bench/multihost.py); prints one JSON document."""
    from harness.hosts import on_host
    if args.what == "describe":
        doc = on_host.describe()
    elif args.what == "sample":
        doc = on_host.sample(None, backends=True) if args.rest[0] == "backends" else on_host.sample(int(args.rest[0]) or None)
    elif args.what == "rtt":
        doc = on_host.rtt(args.rest[0], int(args.rest[1]))
    elif args.what == "mysql":
        doc = on_host.mysql()
    elif args.what == "load":
        split = args.rest.index("--")
        opts = dict(zip(args.rest[:split:2], args.rest[1:split:2]))
        doc = on_host.load(args.rest[split + 1:], float(opts["--timeout"]), opts.get("--oha-db"))
    elif args.what == "settle":
        opts = dict(zip(args.rest[0::2], args.rest[1::2]))
        doc = on_host.settle(opts["--host"], int(opts["--port"]))
    elif args.what == "ceiling":
        opts = dict(zip(args.rest[0::2], args.rest[1::2]))
        expected = float(opts["--expected"]) if opts.get("--expected") else None
        doc = on_host.ceiling(opts["--endpoint"], int(opts["--connections"]), float(opts["--seconds"]), expected)
    else:  # verify
        opts = dict(zip(args.rest[0::2], args.rest[1::2]))
        doc = on_host.verify(opts["--stack"], opts["--host"], int(opts["--port"]))
    on_host.print_json(doc)
    return 0


def stop_like_ctrl_c_on_sigterm() -> None:
    """`kill <harness>` unwinds like Ctrl-C, so the stack and services it started are stopped.

    Stacks run in their own session (a Ctrl-C meant for the harness must not reach them first), so
    nothing else stops them: with Python's default SIGTERM the harness died at once and left the
    stack serving, holding its port for the next run. SIGINT is set too: a harness started in the
    background by a shell without job control (`nohup make soak ... &`, a CI script) inherits
    SIGINT ignored, Python then installs no handler, and `kill -INT` did nothing (a soak ran on
    to its end)."""
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    signal.signal(signal.SIGINT, signal.default_int_handler)


def main(argv=None) -> int:
    stop_like_ctrl_c_on_sigterm()
    parser = argparse.ArgumentParser(prog="harness", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, fn, helptext in [
        ("setup", cmd_setup, "install what the harness and the stacks need"),
        ("services-up", cmd_services_up, "start and seed Redis, MariaDB, memcached"),
        ("services-down", cmd_services_down, "stop the services this project started"),
        ("services-status", cmd_services_status, "show the services' state"),
        ("list", cmd_list, "list the discovered stacks and whether each is available here"),
        ("build", cmd_build, "build stacks"),
        ("verify", cmd_verify, "prove stacks answer the contract byte for byte"),
        ("run", cmd_run, "run one stack in the foreground"),
        ("unit", cmd_unit, "build stacks and run each one's own unit tests (its manifest's test command)"),
        ("test", cmd_test, "services up, verify every available stack, run the harness tests"),
        ("bench", cmd_bench, "benchmark stacks (settings from the environment: see README)"),
        ("report", cmd_report, "render report.md and report.html from a results.json"),
        ("publish", cmd_publish, "commit a whole run under published/ and regenerate the READMEs' figure blocks from it"),
        ("docs", cmd_docs, "the docs test: budgets, shape, links, generated figures, tracker numbers"),
        ("new-stack", cmd_new_stack, "write a new stack's skeleton (manifest, README, placeholder server)"),
        ("ab", cmd_ab, "A/B-test two environments of one stack on one endpoint (settings from the environment)"),
        ("soak", cmd_soak, "load one stack at a fixed rate for a long time, in windows: leaks, stalls, GC pauses "
                           "(settings from the environment)"),
        ("compare", cmd_compare, "compare two results (results.json or ab.json), regressions first"),
        ("sim-hosts", cmd_sim_hosts, "bring the simulated hosts (network namespaces with sshd) up or down"),
        ("on-host", cmd_on_host, "what a multi-host run asks of one host over ssh (prints JSON)"),
    ]:
        p = sub.add_parser(name, help=helptext)
        p.set_defaults(fn=fn)
        if name in ("setup", "list", "build", "verify", "run", "unit"):
            p.add_argument("--stack", default=None, required=name == "run",
                           help="stack name(s), comma-separated (default: all)")
        if name == "report":
            p.add_argument("results", nargs="?", default=str(ROOT / "results" / "latest"),
                           help="a results directory or results.json, a bench's or a soak's (default: results/latest)")
        if name == "publish":
            p.add_argument("run", nargs="?", default="", help="the run's directory (results/<id>); none: only regenerate")
        if name == "new-stack":
            p.add_argument("--name", default="", help="the new stack's name (its directory)")
        if name == "compare":
            p.add_argument("old", nargs="?", default="", help="the older run's directory (or its results.json / ab.json)")
            p.add_argument("new", nargs="?", default="", help="the newer run's directory (or its results.json / ab.json)")
            p.add_argument("--out", default="", help="where to write the HTML page (default: compare.html next to NEW)")
        if name == "verify":
            p.add_argument("--no-build", action="store_true", help="use the stacks as already built")
        if name == "setup":
            p.add_argument("--harness-only", action="store_true", help="only what the harness needs, no stack's")
        if name == "sim-hosts":
            p.add_argument("action", choices=("up", "down"))
        if name == "on-host":
            p.add_argument("what", choices=("describe", "sample", "rtt", "load", "verify", "mysql", "settle", "ceiling"))
            p.add_argument("rest", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except (services.ServiceError, stacks.StackError, stacks.ManifestError, hosts.HostError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
