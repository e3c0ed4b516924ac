"""Real Redis, MariaDB and memcached from Debian, run as plain child processes of the project.

Each one listens on a non-default loopback port from shared-schema/defaults.env, keeps its
files under RUN_DIR, is tracked by a PID file, and is seeded as soon as it answers. Services
named in EXTERNAL_SERVICES are used as they are and never started or stopped.
"""
import getpass
import os
import shutil
import signal
import subprocess
import time

from harness import ports
from harness.accounting import procstats
from harness.config import LOG_DIR, RUN_DIR, SERVICES, external_services, settings
from harness.services import backends

READY_TIMEOUT = 60.0
STOP_TIMEOUT = 30.0
FREEZE_TIMEOUT = 5.0


class ServiceError(RuntimeError):
    pass


def _port(name: str) -> tuple[str, int]:
    s = settings()
    prefix = {"redis": "REDIS", "mysql": "MYSQL", "memcache": "MEMCACHE"}[name]
    return s[f"{prefix}_HOST"], int(s[f"{prefix}_PORT"])


def _dir(name: str):
    d = RUN_DIR / name
    d.mkdir(parents=True, exist_ok=True)
    return d


def _pidfile(name: str):
    return RUN_DIR / f"{name}.pid"


def _log(name: str):
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    return LOG_DIR / f"{name}.log"


def _require(binary: str) -> str:
    path = shutil.which(binary)
    if not path:
        raise ServiceError(f"{binary} not found on PATH: run `make setup` (it installs the Debian packages)")
    return path


def _command(name: str) -> list[str]:
    host, port = _port(name)
    d = _dir(name)
    if name == "redis":
        # No persistence: the data is re-seeded on every start, and fsyncs would only add noise.
        return [_require("redis-server"), "--bind", host, "--port", str(port), "--save", "",
                "--appendonly", "no", "--dir", str(d), "--daemonize", "no", "--maxclients", "10000",
                "--tcp-backlog", "4096", "--protected-mode", "no"]
    if name == "memcache":
        return [_require("memcached"), "-l", host, "-p", str(port), "-U", "0", "-m", "128",
                "-c", "10000", "-t", "2", "-b", "4096"] + (["-u", "root"] if os.geteuid() == 0 else [])
    handling = mariadb_thread_handling()
    datadir = d / "data"
    if not (datadir / "mysql").is_dir():
        _install_mariadb(datadir)
    return [_require("mariadbd"), "--no-defaults", f"--datadir={datadir}", f"--socket={d / 'mysqld.sock'}",
            f"--bind-address={host}", f"--port={port}", f"--log-error={_log(name)}",
            "--skip-name-resolve", "--skip-log-bin", "--performance-schema=OFF",
            "--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin",
            "--max-connections=4000", "--back-log=4096", "--thread-cache-size=512",
            f"--thread-handling={handling}",
            "--max-connect-errors=1000000000", "--innodb-buffer-pool-size=128M",
            "--innodb-flush-log-at-trx-commit=2"] + (["--user=root"] if os.geteuid() == 0 else [])


THREAD_HANDLINGS = ("pool-of-threads", "one-thread-per-connection")


def mariadb_thread_handling() -> str:
    """MariaDB's thread pool by default: on the benchmark's layout MariaDB shares its core with the load
    generator, and a thread per connection (16 to 32 of them busy at once) costs it a fifth to a third
    more CPU per point SELECT than a pool of as many threads as there are CPUs (README, "Backing
    services", has the measurement). MARIADB_THREAD_HANDLING=one-thread-per-connection, MariaDB's own
    default, reproduces the other side."""
    value = os.environ.get("MARIADB_THREAD_HANDLING") or THREAD_HANDLINGS[0]
    if value not in THREAD_HANDLINGS:
        raise ServiceError(f"MARIADB_THREAD_HANDLING must be one of {', '.join(THREAD_HANDLINGS)}, not {value!r}")
    return value


def _install_mariadb(datadir) -> None:
    tool = _require("mariadb-install-db")
    shutil.rmtree(datadir, ignore_errors=True)
    with open(_log("mysql-install"), "w") as log:
        proc = subprocess.run([tool, "--no-defaults", f"--datadir={datadir}", f"--user={getpass.getuser()}",
                               "--auth-root-authentication-method=normal", "--skip-test-db"],
                              stdout=log, stderr=subprocess.STDOUT)
    if proc.returncode != 0:
        raise ServiceError(f"mariadb-install-db failed; see {_log('mysql-install')}")


def _bootstrap_mariadb() -> None:
    """Create the database and the user from the settings, as root over the unix socket."""
    s = settings()
    user, pw, db = s["MYSQL_USER"], s["MYSQL_PASSWORD"], s["MYSQL_DATABASE"]
    import pymysql
    conn = pymysql.connect(unix_socket=str(_dir("mysql") / "mysqld.sock"), user="root", autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE IF NOT EXISTS `{db}` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin")
            # Bound beyond loopback (the backend host of a multi-host run), the stack connects from another host.
            loopback = s["MYSQL_HOST"] in ("127.0.0.1", "localhost", "::1")
            for host in ("127.0.0.1", "localhost", "::1") + (() if loopback else ("%",)):
                cur.execute("CREATE USER IF NOT EXISTS %s@%s IDENTIFIED BY %s", (user, host, pw))
                cur.execute("ALTER USER %s@%s IDENTIFIED BY %s", (user, host, pw))
                cur.execute(f"GRANT ALL ON `{db}`.* TO %s@%s", (user, host))
    finally:
        conn.close()


def _read_pid(name: str) -> int | None:
    try:
        return int(_pidfile(name).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def _alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes. But the main thread turns zombie
    # as soon as it exits, while the other threads may still be exiting and holding the listening
    # socket (seen in CI: memcached's port still accepted right after stop()), so every thread counts.
    try:
        return any(state not in "ZX" for state in procstats.thread_states(pid))
    except FileNotFoundError:
        return False




def _answers(name: str) -> bool:
    try:
        c = backends.client(name, timeout=1.0)
    except Exception:
        return False
    try:
        c.ping()
        return True
    except Exception:
        return False
    finally:
        try:
            c.close()
        except Exception:
            pass


def status(name: str) -> str:
    if name in external_services():
        return "external, answering" if _answers(name) else "external, NOT answering"
    pid = _read_pid(name)
    if _alive(pid):
        return f"running (pid {pid})"
    return "stale pid file" if pid else "stopped"


def start(name: str, quiet: bool = False) -> str:
    """Start (if needed), wait until it answers, seed. Idempotent."""
    say = (lambda *_: None) if quiet else print
    host, port = _port(name)
    if name in external_services():
        if not _answers(name):
            raise ServiceError(f"{name}: EXTERNAL_SERVICES says it runs elsewhere, but {host}:{port} does not answer")
        backends.seed(name)
        say(f"{name}: external at {host}:{port}, seeded")
        return "external"
    pid = _read_pid(name)
    if _alive(pid):
        if not _answers(name):
            _wait_ready(name, None)
        say(f"{name}: already running (pid {pid}) on {host}:{port}")
        return "running"
    if pid:
        _pidfile(name).unlink()
        say(f"{name}: removed stale pid file (pid {pid} is gone)")
    if ports.listening(host, port):
        raise ServiceError(
            f"{name}: {host}:{port} is already in use by a process this project did not start. "
            f"Stop it, choose another port ({name.upper()}_PORT=...), or use it as is with EXTERNAL_SERVICES={name}")
    log = open(_log(name), "a")
    proc = subprocess.Popen(_command(name), stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            cwd=_dir(name), start_new_session=True)
    log.close()
    _pidfile(name).write_text(f"{proc.pid}\n")
    _wait_ready(name, proc)
    if name == "mysql":
        _bootstrap_mariadb()
    backends.seed(name)
    say(f"{name}: started (pid {proc.pid}) on {host}:{port}, seeded")
    return "started"


def _wait_ready(name: str, proc) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            _pidfile(name).unlink(missing_ok=True)
            raise ServiceError(f"{name} exited with code {proc.returncode} while starting:\n{tail(_log(name))}")
        if name == "mysql" and proc is not None:
            # Until bootstrap has created the user, only the root socket can answer.
            if (_dir("mysql") / "mysqld.sock").exists() and ports.listening(*_port(name)):
                return
        elif _answers(name):
            return
        time.sleep(0.1)
    raise ServiceError(f"{name} did not answer within {READY_TIMEOUT:.0f}s:\n{tail(_log(name))}")


def stop(name: str, quiet: bool = False) -> None:
    say = (lambda *_: None) if quiet else print
    if name in external_services():
        say(f"{name}: external, left alone")
        return
    pid = _read_pid(name)
    if not _alive(pid):
        _pidfile(name).unlink(missing_ok=True)
        say(f"{name}: not running")
        return
    os.kill(pid, signal.SIGCONT)  # a frozen process cannot act on SIGTERM
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if _alive(pid):
        os.kill(pid, signal.SIGKILL)
        while _alive(pid):
            time.sleep(0.05)
    _pidfile(name).unlink(missing_ok=True)
    say(f"{name}: stopped (pid {pid})")


def freeze(name: str) -> None:
    """SIGSTOP: the port stays open and accepts, but nothing answers (a hung backend).

    Returns once every thread has stopped. kill() only queues the signal: the thread that takes it
    stops the others, and until they have all been scheduled one of them can still answer a query
    (seen in CI: MariaDB answered a /mysql sent just after the kill; a third of the kills left a
    thread running when measured)."""
    pid = _managed_pid(name)
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + FREEZE_TIMEOUT
    while not all_threads_stopped(pid):
        if time.monotonic() >= deadline:
            os.kill(pid, signal.SIGCONT)
            raise ServiceError(f"{name} (pid {pid}) did not stop within {FREEZE_TIMEOUT:.0f}s of SIGSTOP")
        time.sleep(0.001)


def all_threads_stopped(pid: int) -> bool:
    return all(state in "TtZX" for state in procstats.thread_states(pid))


def thaw(name: str) -> None:
    os.kill(_managed_pid(name), signal.SIGCONT)


def _managed_pid(name: str) -> int:
    pid = _read_pid(name)
    if name in external_services() or not _alive(pid):
        raise ServiceError(f"{name} is not a running service of this project")
    return pid


def pid(name: str) -> int | None:
    p = _read_pid(name)
    return p if _alive(p) else None


def up() -> list[str]:
    """Start every service; returns the ones this call started (a caller stops only those)."""
    return [name for name in SERVICES if start(name) == "started"]


def down(names=SERVICES) -> None:
    for name in names:
        stop(name)


def tail(path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return f"(no log at {path})"
