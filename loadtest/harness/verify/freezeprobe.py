"""By hand: does any /mysql work outlive its 503? (the share-of-bound work; the stacks' READMEs quote its output)

    make build STACK=x && make services-up
    PYTHONPATH=loadtest .venv/bin/python -m harness.freezeprobe x [--requests 96]

Starts stack x (already built) on its manifest port + --port-offset (400), against this project's
MariaDB (RUN_DIR, MYSQL_PORT, as `make services-up` left it); freezes MariaDB (SIGSTOP, as verify's
outage check does), sends more /mysql requests at once than a pool holds, each on its own
connection, and times every answer; looks at MariaDB's side of its TCP connections while it is
still frozen (a query the stack still waits for is an ESTAB socket with the query unread in its
receive queue; a connection the stack closed is CLOSE-WAIT); thaws it, sends the same burst again
at once and times it; then lists what MariaDB's processlist shows. With --lock, MariaDB is not
frozen but keeps answering while the probe holds `LOCK TABLES greeting WRITE` (a migration's
metadata lock, say): every read waits inside MariaDB, and its processlist shows which reads are
still waiting after their 503.
It measures time: run it on a quiet machine. Nothing but the stack is started or stopped.
"""
import argparse
import collections
import concurrent.futures
import dataclasses
import http.client
import statistics
import subprocess
import time

from harness import services, stacks
from harness.config import backend_timeout_s, settings
from harness.services import backends


def _burst(port: int, ids, timeout: float) -> list[tuple[int | str, float]]:
    def one(i):
        started = time.monotonic()
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            conn.request("GET", f"/mysql?id={i}")
            status = conn.getresponse().status
            conn.close()
        except OSError as e:
            status = type(e).__name__
        return status, time.monotonic() - started

    with concurrent.futures.ThreadPoolExecutor(len(ids)) as pool:
        return list(pool.map(one, ids))


def _describe(label: str, answers) -> str:
    by_status = collections.Counter(str(s) for s, _ in answers)
    times = sorted(t for _, t in answers)
    return (f"{label}: {len(answers)} requests: "
            + ", ".join(f"{n} x {s}" for s, n in sorted(by_status.items()))
            + f"; answered in {times[0] * 1000:.0f} ms (fastest), {statistics.median(times) * 1000:.0f} ms (median),"
            f" {times[-1] * 1000:.0f} ms (slowest)")


def _mariadb_sockets(mysql_port: int) -> str:
    """MariaDB's end of every TCP connection to it, by state; for ESTAB, how many hold bytes MariaDB
    has not read (a request the stack still waits on; a connection whose handshake MariaDB has not
    begun holds none). A CLOSE-WAIT one the stack has closed (its FIN counts 1 in ss's Recv-Q)."""
    out = subprocess.run(["ss", "-tnH", "state", "all", f"( sport = :{mysql_port} )"],
                         capture_output=True, text=True, check=True).stdout
    states, unread = collections.Counter(), 0
    for line in out.splitlines():
        fields = line.split()
        if fields[0] == "LISTEN":
            continue
        states[fields[0]] += 1
        if fields[0] == "ESTAB" and int(fields[1]) > 0:
            unread += 1
    return ", ".join(f"{n} {s}" + (f" ({unread} with a request unread)" if s == "ESTAB" else "")
                     for s, n in sorted(states.items())) or "none"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("stack", help="the stack to start (built already)")
    p.add_argument("--port-offset", type=int, default=400, help="its HTTP port: the manifest's + this")
    p.add_argument("--requests", type=int, default=96, help="requests per burst (more than the pool holds)")
    p.add_argument("--cold", action="store_true",
                   help="no burst before the freeze: the frozen burst meets connections that have not"
                        " run the statement yet (a client that prepares it on first use prepares it then)")
    p.add_argument("--lock", action="store_true",
                   help="hold LOCK TABLES greeting WRITE instead of freezing MariaDB")
    p.add_argument("--frozen", type=float, default=None,
                   help="seconds MariaDB stays frozen or locked (default: BACKEND_TIMEOUT_MS + 2 s)")
    args = p.parse_args()
    deadline = backend_timeout_s()
    frozen_for = args.frozen if args.frozen is not None else deadline + 2
    mysql_port = int(settings()["MYSQL_PORT"])
    ids = list(range(1, args.requests + 1))
    (stack,) = stacks.select(args.stack)
    stack = dataclasses.replace(stack, port=stack.port + args.port_offset)
    running = stacks.start(stack)
    try:
        print(f"{stack.name} on port {stack.port} (pid {running.pid}, log {running.log})")
        probe(stack.port, ids, deadline, frozen_for, mysql_port, args.cold, args.lock)
    finally:
        running.stop()
    return 0


def _processlist(db) -> str:
    with db.conn.cursor() as cur:
        cur.execute("SELECT command, state, COUNT(*) FROM information_schema.processlist"
                    " WHERE id <> CONNECTION_ID() GROUP BY command, state")
        return "; ".join(f"{n} x {c} ({s or 'no state'})" for c, s, n in cur.fetchall()) or "none"


def probe(port: int, ids: list[int], deadline: float, frozen_for: float, mysql_port: int, cold: bool,
          lock: bool) -> None:
    if not cold:
        print(_describe("before, MariaDB up", _burst(port, ids, deadline + 10)))
    print(f"MariaDB's sockets before: {_mariadb_sockets(mysql_port)}")
    db = backends.client("mysql")
    try:
        what = "locked" if lock else "frozen"
        if lock:
            with db.conn.cursor() as cur:
                cur.execute("LOCK TABLES greeting WRITE")
        else:
            services.freeze("mysql")
        frozen_at = time.monotonic()
        try:
            print(_describe(f"MariaDB {what}", _burst(port, ids, frozen_for + 10)))
            for at in (deadline + 0.5, frozen_for):
                time.sleep(max(0.0, frozen_at + at - time.monotonic()))
                print(f"{time.monotonic() - frozen_at:.1f} s into it, MariaDB's sockets: {_mariadb_sockets(mysql_port)}"
                      + (f"; processlist: {_processlist(db)}" if lock else ""))
        finally:
            if lock:
                with db.conn.cursor() as cur:
                    cur.execute("UNLOCK TABLES")
            else:
                services.thaw("mysql")
        print(_describe(f"at once after it ({'unlocked' if lock else 'thawed'})", _burst(port, ids, deadline + 10)))
        print(f"MariaDB's processlist after it: {_processlist(db)}")
        time.sleep(0.5)
        print(f"MariaDB's sockets 0.5 s later: {_mariadb_sockets(mysql_port)}")
    finally:
        db.close()


if __name__ == "__main__":
    raise SystemExit(main())
