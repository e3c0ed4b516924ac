"""A benchmark run across hosts: the stack on the server host, the backends on the backend host,
the load from every client host at once, each reached over OpenSSH (hosts.py).

The run's order is the one-box run's: prepare, services, then per stack verify -> start -> warm
-> load, every measurement written into results.json as soon as it is made. What differs is
where things run and how they are read: the verification runs on a client host, across the
network; each level's connections are split between the client hosts, whose wrk runs start
together and whose histograms merge exactly (merge.py); the accounting is read on each host
(on_host.py). Whatever it started, on whichever host, is stopped on the way out, Ctrl-C and
failures included.
"""
import concurrent.futures
import datetime
import json
import os
import pathlib
import shlex
import subprocess
import time

from harness import hosts, stacks
from harness.accounting import measure
from harness.bench import endpoint as endpoint_runner, machine, plan
from harness.bench.box import BEHIND_RATE, exclusive, new_run_dir
from harness.bench.run import render
from harness.bench.settings import Settings
from harness.config import SERVICES, external_services, settings as contract_settings
from harness.contract.cases import DATA_ENDPOINTS
from harness.hosts import on_host
from harness.loadgen import merge, oha as loadgen_oha, wrk as loadgen_wrk
from harness.reports import results
from harness.services import backends

REMOTE_HARNESS = ".venv/bin/python -m harness"  # in the checkout, with PYTHONPATH=loadtest (host_env)
START_TIMEOUT_S = 180
STOP_TIMEOUT_S = 30
IPERF_PORT = 5201
IPERF_SECONDS = 2


class MultiHostError(RuntimeError):
    pass


def split(connections: int, parts: int) -> list[int]:
    """Connections per client host: as even as can be, never zero (fewer hosts then take part)."""
    base, extra = divmod(connections, parts)
    return [n for n in (base + (1 if i < extra else 0) for i in range(parts)) if n > 0]


class MultiHostBench:
    def __init__(self, settings: Settings, roles: hosts.Roles, out_dir: pathlib.Path | None = None):
        self.s, self.roles = settings, roles
        self.dir = new_run_dir(out_dir)
        self.doc: dict = {}
        self.addresses: dict[str, str] = {}
        self.services_started = False
        self.serving: dict | None = None  # {"stack": name, "pid": remote harness pid, "log": path}
        self.shared: dict[str, bool] = {}
        self.cpus: dict[str, int] = {}  # role -> usable CPUs (a client host's wrk threads)

    # ------------------------------------------------------------------ remote commands

    def host_env(self, host: hosts.Host) -> dict[str, str]:
        """The contract's settings as this run has them, with the hosts' addresses, and a run
        directory per role (simulated hosts share one file system)."""
        env = dict(contract_settings())
        env["HOST"] = self.addresses["server"]
        if self.roles.backend:
            for name in SERVICES:
                if name not in external_services():
                    env[f"{name.upper()}_HOST"] = self.addresses["backend"]
        if os.environ.get("BENCH_PORT_OFFSET"):
            env["BENCH_PORT_OFFSET"] = os.environ["BENCH_PORT_OFFSET"]
        env["RUN_DIR"] = f".run/hosts/{host.role}"
        env["PYTHONPATH"] = "loadtest"
        env["PYTHONUNBUFFERED"] = "1"  # the start is seen in the remote log as it happens
        return env

    def harness_line(self, host: hosts.Host, args: str) -> str:
        return f"cd {shlex.quote(hosts.checkout_dir())} && {hosts.env_line(self.host_env(host))} {REMOTE_HARNESS} {args}"

    def harness(self, host: hosts.Host, args: str, timeout: float | None = 120) -> subprocess.CompletedProcess:
        return host.run(self.harness_line(host, args), timeout=timeout)

    def on_host(self, host: hosts.Host, args: str, timeout: float | None = 60) -> dict:
        out = self.harness(host, f"on-host {args}", timeout).stdout
        try:
            return json.loads(out.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError) as e:
            raise MultiHostError(f"{host}: on-host {args} printed no JSON: {out[-500:]}") from e

    def say(self, message: str) -> None:
        print(f"hosts: {message}", flush=True)

    def save(self) -> None:
        results.write(self.doc, self.dir)

    # ------------------------------------------------------------------ phases

    def resolve(self) -> None:
        self.addresses = {"server": self.roles.server.address}
        if self.roles.backend:
            self.addresses["backend"] = self.roles.backend.address
        for c in self.roles.clients:
            self.addresses[c.role] = c.address

    def prepare(self, selected) -> None:
        """Each host gets the checkout and runs the setup (and, on the server host, the build) it
        needs. A host whose HOSTS_CHECKOUT is this very directory needs neither: the `make` that
        started this run has set this checkout up, and the stacks are built here."""
        for host in self.roles.all:
            self.shared[host.role] = hosts.shares_this_checkout(host)
        if any(self.shared.values()):
            for stack in selected:
                stacks.build(stack)
        names = ",".join(s.name for s in selected)
        for host in self.roles.all:
            if self.shared[host.role]:
                self.say(f"{host.destination}: shares this checkout ({hosts.checkout_dir()})")
                continue
            self.say(f"{host.destination}: copying the checkout to {hosts.checkout_dir()} and running make setup ...")
            hosts.ship_checkout(host)
            d = shlex.quote(hosts.checkout_dir())
            if host is self.roles.server:
                host.run(f"cd {d} && make setup STACK={shlex.quote(names)}", timeout=3600)
                self.harness(host, f"build --stack {shlex.quote(names)}", timeout=3600)
            else:  # the harness's own needs (the services, wrk, oha), no stack's
                host.run(f"cd {d} && make .venv/.installed", timeout=3600)
                self.harness(host, "setup --harness-only", timeout=3600)

    def describe_hosts(self) -> dict:
        out = {}
        for host in self.roles.all:
            info = self.on_host(host, "describe")
            self.cpus[host.role] = info.get("cpus_usable") or 1
            out[host.role] = {"destination": host.destination, "address": self.addresses[host.role],
                              "shares_checkout": self.shared.get(host.role, False), "machine": info}
        return out

    def measure_network(self, port: int) -> dict:
        """Round trips client -> server (the stack's port) and server -> backend (Redis's port), and
        the bandwidth from the first client host to the server host (iperf3, a few seconds)."""
        net: dict = {"rtt": {}, "bandwidth": None}
        server = self.addresses["server"]
        for c in self.roles.clients:
            net["rtt"][f"{c.role}->server"] = self.on_host(c, f"rtt {server} {port}")
        if self.roles.backend:
            redis_port = contract_settings()["REDIS_PORT"]
            net["rtt"]["server->backend"] = self.on_host(self.roles.server, f"rtt {self.addresses['backend']} {redis_port}")
        net["bandwidth"] = self.bandwidth()
        return net

    def bandwidth(self) -> dict:
        server, client = self.roles.server, self.roles.clients[0]
        # Tied: killing this ssh hangs the listener up, whether or not a test reached it.
        listener = server.popen(f"iperf3 -s -1 -B {self.addresses['server']} -p {IPERF_PORT}", tied=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(50):
                proc = client.run(f"iperf3 -c {self.addresses['server']} -p {IPERF_PORT} -t {IPERF_SECONDS} -J",
                                  timeout=IPERF_SECONDS + 30, check=False)
                try:
                    bps = json.loads(proc.stdout)["end"]["sum_received"]["bits_per_second"]
                except (json.JSONDecodeError, KeyError):
                    bps = None  # the listener is not up yet: iperf3 says so in its JSON ("error")
                if proc.returncode == 0 and bps:
                    return {"from": client.role, "to": "server", "gbit_per_s": round(bps / 1e9, 3),
                            "seconds": IPERF_SECONDS, "tool": "iperf3 (one TCP stream)"}
                time.sleep(0.2)  # the listener may not be up yet
            return {"failure": proc.stdout[-300:] or proc.stderr[-300:]}
        finally:
            listener.kill()
            listener.wait()

    def services_up(self) -> None:
        if not self.roles.backend:
            return
        self.say(f"{self.roles.backend.destination}: starting the services on {self.addresses['backend']} ...")
        self.services_started = True
        self.harness(self.roles.backend, "services-up", timeout=300)

    def mysql_thread_handling(self) -> str | None:
        """Read where MariaDB runs: on the backend host, or (external services) from here."""
        if not self.roles.backend:
            return backends.mysql_thread_handling()
        return self.on_host(self.roles.backend, "mysql").get("thread_handling")

    def services_down(self) -> None:
        if self.roles.backend and self.services_started:
            self.harness(self.roles.backend, "services-down", timeout=120)
            self.services_started = False

    def start_stack(self, stack) -> None:
        server = self.roles.server
        log = f".run/hosts/server/serve-{stack.name}.log"
        line = (f"cd {shlex.quote(hosts.checkout_dir())} && mkdir -p .run/hosts/server && "
                f"{{ {hosts.env_line(self.host_env(server))} setsid {REMOTE_HARNESS} run --stack {shlex.quote(stack.name)} "
                f"> {log} 2>&1 < /dev/null & }} && echo $!")
        pid = int(server.run(line, timeout=60).stdout.strip().splitlines()[-1])
        self.serving = {"stack": stack.name, "pid": pid, "log": log}
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            out = server.run(f"cd {shlex.quote(hosts.checkout_dir())} && cat {log}; kill -0 {pid} 2>/dev/null && echo ALIVE",
                             check=False, timeout=30).stdout
            if "is serving" in out:
                return
            if "ALIVE" not in out:
                self.serving = None
                last = (out.strip().splitlines() or ["(no output)"])[-1]
                raise MultiHostError(f"{stack.name} did not start on {server.destination} ({last}); its log:\n{out[-1500:]}")
            time.sleep(0.5)
        raise MultiHostError(f"{stack.name} did not start on {server.destination} within {START_TIMEOUT_S} s")

    def stack_root_pid(self) -> int | None:
        """The stack's own process (the child of the remote harness `run`)."""
        out = self.roles.server.run(f"pgrep -P {self.serving['pid']} | head -1", check=False).stdout.strip()
        return int(out) if out.isdigit() else None

    def stop_stack(self) -> None:
        if not self.serving:
            return
        pid = self.serving["pid"]
        # The remote harness stops its stack on SIGTERM, like Ctrl-C (__main__.stop_like_ctrl_c_on_sigterm).
        self.roles.server.run(
            f"kill -TERM {pid} 2>/dev/null; for i in $(seq {STOP_TIMEOUT_S * 10}); do kill -0 {pid} 2>/dev/null || exit 0; "
            f"sleep 0.1; done; kill -KILL -- -{pid} 2>/dev/null; exit 0", check=False, timeout=STOP_TIMEOUT_S + 30)
        self.serving = None

    def verify(self, stack) -> dict:
        client = self.roles.clients[0]
        self.say(f"{stack.name}: verifying from {client.destination} across the network ...")
        proc = client.run(self.harness_line(client, f"on-host verify --stack {shlex.quote(stack.name)} "
                                                    f"--host {self.addresses['server']} --port {stack.port}"),
                          check=False, timeout=600)
        (self.dir / "raw" / f"{stack.name}-verify.txt").write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr)
        try:
            return json.loads(proc.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            return {"ok": False, "failed": ["verification did not finish"], "detail": (proc.stderr or proc.stdout)[-500:]}

    # ------------------------------------------------------------------ load

    def fan_out(self, work: list, duration: float, raw_name: str, stack) -> tuple[list, dict]:
        """Start one generator per client host at once and wait for all. `work`: (client, files to
        write there first {path: text}, generator argv, oha database path or None). Returns each
        host's entry (its accounting, its raw output kept under raw/, `dropped` with the reason when
        it gave no result) with the generator's JSON result, and the server/backend hosts' accounting."""
        root = self.stack_root_pid()
        before = {"server": self.on_host(self.roles.server, f"sample {root or 0}")}
        if self.roles.backend:
            before["backend"] = self.on_host(self.roles.backend, "sample backends")
        d = shlex.quote(hosts.checkout_dir())

        def one(item):
            client, files, cmd, oha_db = item
            try:
                for path, text in files.items():
                    client.run(f"cd {d} && mkdir -p $(dirname {shlex.quote(path)}) && cat > {shlex.quote(path)}",
                               input=text, timeout=60)
                extra = f"--oha-db {shlex.quote(oha_db)} " if oha_db else ""
                # Tied to the connection: an interrupted run leaves no generator behind on the host.
                proc = client.run(self.harness_line(client, f"on-host load --timeout {int(duration + 60)} {extra}-- "
                                                            f"{shlex.join(cmd)}"), check=False, timeout=duration + 120,
                                  tied=True)
            except hosts.HostError as e:
                return None, str(e).splitlines()[0]
            if proc.returncode != 0:
                return None, f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-300:]}"
            try:
                return json.loads(proc.stdout.strip().splitlines()[-1]), None
            except (json.JSONDecodeError, IndexError):
                return None, f"no result: {proc.stdout[-300:]}"

        with concurrent.futures.ThreadPoolExecutor(len(work)) as pool:
            outcomes = list(pool.map(one, work))
        after = {"server": self.on_host(self.roles.server, f"sample {root or 0}")}
        if self.roles.backend:
            after["backend"] = self.on_host(self.roles.backend, "sample backends")
        entries = []
        for (client, _, cmd, _), (got, failure) in zip(work, outcomes):
            entry = {"host": client.role, "destination": client.destination, "result": got}
            if got is not None:
                (self.dir / "raw" / f"{client.role}-{raw_name}").write_text(
                    f"$ {' '.join(got['cmd'])}\n# exit {got['returncode']}, {got['wall_s']:.2f} s\n{got['stdout']}\n"
                    f"--- stderr ---\n{got['stderr']}")
                entry["raw"] = f"raw/{client.role}-{raw_name}"
                entry["stats"] = got["stats"]
                entry["flags"] = measure.flags(got["stats"], self.s.generator_max, self.s.foreign_max)
            if failure:
                entry["dropped"] = failure
            entries.append(entry)
        return entries, {role: on_host.delta(before[role], after[role]) for role in before}

    def finish_record(self, record: dict, entries: list, accounting: dict) -> dict:
        """The per-host entries (without the bulky raw result), the server and backend hosts'
        accounting, the one-box record's `stats` names for the reports, and the flags."""
        for e in entries:
            e.pop("result", None)
        record["per_host"] = entries
        server = accounting["server"]
        record["server_host"] = server
        if "backend" in accounting:
            record["backend_host"] = accounting["backend"]
        record["stats"] = {"wall_s": server["wall_s"], "server_cpu_s": server["tree_cpu_s"],
                           "server_cpu_share": server["tree_cpu_share"], "foreign_cpu_share": server["foreign_cpu_share"],
                           "steal_s": server["steal_s"],
                           "generator_cpu_share": max((e["stats"]["generator_cpu_share"] or 0 for e in entries
                                                       if "stats" in e), default=None),
                           "memory": {"peak_rss_bytes": server["tree_rss_bytes"], "steady_rss_bytes": server["tree_rss_bytes"]}}
        record["cpu_us_per_request"] = (round(server["tree_cpu_s"] / record["requests"] * 1e6, 1)
                                        if record.get("requests") else None)
        flags = set()
        for e in entries:
            flags.update(f"{f}@{e['host']}" for f in e.get("flags", []) if f == "generator-saturated")
            if "dropped" in e:
                flags.add(f"client-dropped@{e['host']}")
        # The server host's foreign load, by the one-box rule (measure.flags); each client's generator above.
        flags.update(f for f in measure.flags({"foreign_cpu_share": server["foreign_cpu_share"]}, self.s.generator_max,
                                              self.s.foreign_max) if f == "disturbed")
        if not record.get("requests"):
            flags.add("no-answers")
        elif record.get("kind") == "open" and (record.get("achieved_fraction") or 0) < BEHIND_RATE:
            flags.add("behind-rate")
        record["flags"] = sorted(flags)
        return record

    @staticmethod
    def parse_parts(entries: list, shares: list, parse, shown: tuple) -> list[dict]:
        """Each client host's result parsed (`parse`); one that cannot be is marked dropped. Each
        entry gets its connections and its own `shown` figures; returns the parsed parts to merge."""
        parts = []
        for e, (_, n) in zip(entries, shares):
            e["connections"] = n
            if e.get("result") is None:
                continue
            try:
                parsed = parse(e["result"])
            except (ValueError, KeyError) as err:  # the loadgen modules' output errors are ValueErrors
                e["dropped"] = str(err).splitlines()[0]
                continue
            parts.append(parsed)
            e.update({k: parsed[k] for k in shown})
        return parts

    def base_url(self, stack) -> str:
        return f"http://{self.addresses['server']}:{stack.port}"

    def closed_run(self, stack, endpoint: str, connections: int, duration: float, raw_name: str) -> dict:
        """One level: its connections split between the client hosts, their wrk runs started together."""
        target = self.base_url(stack) + loadgen_wrk.endpoint_path(endpoint).split("?")[0]
        script = loadgen_wrk.lua_script(endpoint, histogram=True)
        shares = list(zip(self.roles.clients, split(connections, len(self.roles.clients))))
        work = []
        for client, n in shares:
            path = f".run/hosts/{client.role}/wrk-{endpoint}.lua"
            threads = loadgen_wrk.threads_for(n, self.cpus.get(client.role, 1))
            work.append((client, {path: script}, loadgen_wrk.command(target, n, duration, path, threads, self.s.timeout_s),
                         None))
        entries, accounting = self.fan_out(work, duration, raw_name, stack)

        def parse(got):
            parsed = loadgen_wrk.parse(got["stdout"])
            return {**parsed, "histogram": loadgen_wrk.parse_histogram(got["stdout"]), "stdout": got["stdout"]}
        parts = self.parse_parts(entries, shares, parse, ("requests", "throughput_rps", "latency_ms", "errors"))
        record = {"kind": "closed", "endpoint": endpoint, "connections": connections, **merge.closed(parts)}
        return self.finish_record(record, entries, accounting)

    def open_run(self, stack, endpoint: str, rate: float, connections: int, raw_name: str) -> dict:
        """One fixed arrival rate, split evenly between the client hosts (with the connections), each
        an oha run with latency correction writing every answered request to its database."""
        base = self.base_url(stack)
        shares = list(zip(self.roles.clients, split(connections, len(self.roles.clients))))
        work = []
        for client, n in shares:
            files, urls = {}, None
            if endpoint in DATA_ENDPOINTS:
                urls = f".run/hosts/{client.role}/oha-urls-{endpoint}.txt"
                files[urls] = "".join(f"{base}{loadgen_wrk.endpoint_path(endpoint)}{i}\n" for i in range(1, loadgen_wrk.IDS + 1))
            db = f".run/hosts/{client.role}/oha-{raw_name}.db"
            # "oha" is found on the host (on_host.load): cargo puts it where a non-interactive ssh may not look.
            cmd = loadgen_oha.command("oha", base, endpoint, rate / len(shares), n, self.s.open_duration,
                                      self.s.timeout_s, urls) + ["--db-url", db]
            work.append((client, files, cmd, db))
        entries, accounting = self.fan_out(work, self.s.open_duration, raw_name, stack)

        def parse(got):
            parsed = loadgen_oha.parse(got["stdout"], rate / len(shares), self.s.open_duration)
            if got.get("durations_ns") is None:
                raise loadgen_oha.OhaOutputError("oha wrote no per-request database")
            return {**parsed, "durations_ns": got["durations_ns"]}
        parts = self.parse_parts(entries, shares, parse,
                                 ("requests", "throughput_rps", "latency_ms", "errors", "achieved_fraction"))
        record = {"kind": "open", "endpoint": endpoint, "connections": connections,
                  **merge.open_loop(parts, rate, self.s.open_duration)}
        return self.finish_record(record, entries, accounting)

    # ------------------------------------------------------------------ endpoint.Where

    def load_closed(self, stack, endpoint: str, connections: int, duration: float, raw_name: str) -> dict:
        return self.closed_run(stack, endpoint, connections, duration, raw_name)

    def load_open(self, stack, endpoint: str, rate: float, connections: int, raw_name: str) -> dict:
        return self.open_run(stack, endpoint, rate, connections, raw_name)

    def settle(self, stack) -> float:
        """Seen from the first client host, as the load sees the stack."""
        client = self.roles.clients[0]
        return self.on_host(client, f"settle --host {self.addresses['server']} --port {stack.port}",
                            timeout=endpoint_runner.SETTLE_MAX + 60)["settle_s"]

    def adjacent_ceiling(self, stack, endpoint: str, connections: int) -> dict:
        """The backend's tool on the server host (where the stack is the backend's client), the stack
        idle, at the headline's connections; its output kept in raw/ like the one-box run's."""
        seconds = self.s.calibration_duration
        rec = self.on_host(self.roles.server, f"ceiling --endpoint {endpoint} --connections {connections} "
                                              f"--seconds {seconds:g}", timeout=seconds * 20 + 120)
        name = f"{stack.name}-ceiling-{endpoint}-c{connections}.txt"
        (self.dir / "raw").mkdir(parents=True, exist_ok=True)
        (self.dir / "raw" / name).write_text(rec.pop("raw_text", ""))
        rec["raw"] = f"raw/{name}"
        rec["host"] = "server"
        self.say(f"{stack.name:14} {endpoint:8} c={connections:<5} {rec.get('tool')} "
                 f"{rec.get('throughput_rps') or 0:>10,.0f} req/s (ceiling beside the headline, on the server host)")
        return rec

    def open_loop_unavailable(self) -> str | None:
        return None  # oha is found on each client host (on_host.load); a host without it fails its run, said there

    def tell(self, planned_s: float, line: str) -> None:
        self.say(line)
        self.save()

    def origin(self, record: dict) -> str:
        return f"from {record.get('merged_from', 0)} client host(s) "

    def bench_stack(self, stack, entry: dict) -> None:
        entry.update({"name": stack.name, "language": stack.language, "framework": stack.framework,
                      "description": stack.description, "port": stack.port, "status": "running"})
        self.start_stack(stack)
        entry["verify"] = self.verify(stack)
        if not entry["verify"].get("ok"):
            entry.update(status="failed", reason="verification across the network: "
                         + ", ".join(entry["verify"].get("failed") or ["?"]))
            return
        self.say(f"{stack.name}: verified across the network ({entry['verify'].get('passed')} checks)")
        if "network" not in self.doc:
            self.doc["network"] = self.measure_network(stack.port)
            self.save()
        warm = {}
        for endpoint in self.s.endpoints:
            rec = self.closed_run(stack, endpoint, 64, max(1.0, self.s.warmup_min), f"{stack.name}-warmup-{endpoint}.txt")
            warm[endpoint] = rec.get("throughput_rps")
        entry["warmup"] = {"seconds": max(1.0, self.s.warmup_min) * len(self.s.endpoints), "rates_rps": warm,
                           "stable": None, "method": "one run per endpoint of warmup_min s at 64 connections"}
        entry["endpoints"] = {}
        entry["status"] = "benchmarked"
        for endpoint in self.s.endpoints:
            entry["endpoints"][endpoint] = endpoint_runner.measure(self, stack, endpoint)
            self.save()

    def run(self, selected) -> pathlib.Path:
        with exclusive():
            return self._run(selected)

    def _run(self, selected) -> pathlib.Path:
        started_at = datetime.datetime.now(datetime.timezone.utc)
        self.doc = {**machine.run_header(results.SCHEMA, results.SCHEMA_VERSION, started_at),
                    "settings": self.s.as_dict(), "roles": self.roles.as_dict(),
                    # No CPU lists: each role has a host's every CPU (see "hosts").
                    "cpu_layout": {"source": "one host per role", "server": "", "loadgen": "", "backends": ""},
                    "limits": {"nofile_soft": None, "somaxconn": None}, "tools": {},
                    "services": {n: ("external" if n in external_services() else "backend host") for n in SERVICES},
                    "ceilings": [], "stacks": []}
        self.save()
        try:
            self.resolve()
            self.say("roles: " + ", ".join(f"{h.role} {h.destination} ({self.addresses[h.role]})" for h in self.roles.all))
            self.prepare(selected)
            self.doc["hosts"] = self.describe_hosts()
            server_machine = self.doc["hosts"]["server"]["machine"]
            self.doc["limits"]["somaxconn"] = server_machine.get("somaxconn")
            self.doc["tools"] = self.doc["hosts"][self.roles.clients[0].role]["machine"].get("tools", {})
            self.save()
            self.services_up()
            self.doc["mysql_thread_handling"] = self.mysql_thread_handling()
            for stack in selected:
                entry = {"name": stack.name}
                self.doc["stacks"].append(entry)
                try:
                    self.bench_stack(stack, entry)
                except (MultiHostError, hosts.HostError, stacks.StackError) as e:
                    entry.update(status="error", reason=str(e).splitlines()[0])
                finally:
                    self.stop_stack()
                self.save()
            self.doc["complete"] = True
        finally:
            try:
                self.stop_stack()
            finally:
                try:
                    self.services_down()
                finally:
                    for host in self.roles.all:
                        host.close()
                    machine.run_footer(self.doc, started_at)
                    self.save()
                    results.link_latest(self.dir.parent, self.dir)
                    render(self.dir)
        self.say(f"done in {plan.fmt(self.doc['duration_s'])}; report: {self.dir / 'report.html'}")
        return self.dir
