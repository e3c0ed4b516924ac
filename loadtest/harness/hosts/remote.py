"""The hosts of a multi-host run, and how the harness reaches them: OpenSSH, with the user's own
config, keys and agent. No agent or protocol of the project's own runs on any host.

Roles come from the environment: SERVER_HOST, BACKEND_HOST and CLIENT_HOSTS (comma-separated),
each an SSH destination (`user@host`, or a `Host` name of SSH_CONFIG). A role's address, the one
the other hosts use to reach it, is the HostName OpenSSH resolves for it (`ssh -G`), unless
SERVER_ADDR / BACKEND_ADDR give another (a private network beside the one SSH uses).
"""
import dataclasses
import os
import pathlib
import shlex
import socket
import subprocess
import tempfile

from harness.config import ROOT, RUN_DIR

CONNECT_TIMEOUT_S = 10
# A master connection per host: every later command costs one round trip, not a handshake.
CONTROL_PERSIST_S = 120


class HostError(RuntimeError):
    pass


@dataclasses.dataclass
class Host:
    role: str
    destination: str
    address_override: str = ""

    # ------------------------------------------------------------------ transport

    def ssh_options(self) -> list[str]:
        control = RUN_DIR / "ssh"
        if len(str(control)) + 42 > 100:  # a socket path is at most 107 bytes; %C is 40
            control = pathlib.Path(tempfile.gettempdir()) / f"reference-servers-ssh-{os.getuid()}"
        control.mkdir(mode=0o700, parents=True, exist_ok=True)
        config = os.environ.get("SSH_CONFIG", "")
        return ((["-F", config] if config else [])
                + ["-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                   "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3",
                   "-o", "ControlMaster=auto", "-o", f"ControlPath={control}/%C",
                   "-o", f"ControlPersist={CONTROL_PERSIST_S}"])

    def argv(self, command: str, tied: bool = False) -> list[str]:
        """`tied`: a terminal on the host (`ssh -tt`), so that when this connection ends (Ctrl-C here,
        a failure) the kernel hangs up the command and its children there, as it does for a login."""
        return ["ssh", *self.ssh_options(), *(["-tt"] if tied else []), self.destination, command]

    def run(self, command: str, timeout: float | None = None, check: bool = True,
            input: str | bytes | None = None, text: bool = True, tied: bool = False) -> subprocess.CompletedProcess:
        """`command` is a shell command line on the host (quote its parts with `line`). `tied` (see
        argv) takes no input, and the command's stderr arrives in its stdout."""
        try:
            proc = subprocess.run(self.argv(command, tied), capture_output=True, timeout=timeout, input=input, text=text,
                                  stdin=None if input is not None else subprocess.DEVNULL)
        except subprocess.TimeoutExpired as e:
            raise HostError(f"{self}: `{command}` took longer than {timeout:.0f} s") from e
        if check and proc.returncode != 0:
            err = proc.stderr if text else proc.stderr.decode(errors="replace")
            raise HostError(f"{self}: `{command}` exited {proc.returncode}: {err.strip()[-2000:]}")
        return proc

    def popen(self, command: str, tied: bool = False, **kwargs) -> subprocess.Popen:
        kwargs.setdefault("stdin", subprocess.DEVNULL)
        return subprocess.Popen(self.argv(command, tied), **kwargs)

    def close(self) -> None:
        """End the master connection (it would otherwise outlive the run by CONTROL_PERSIST_S)."""
        subprocess.run(["ssh", *self.ssh_options(), "-O", "exit", self.destination], capture_output=True)

    # ------------------------------------------------------------------ where it is

    def ssh_hostname(self) -> str:
        proc = subprocess.run(["ssh", *self.ssh_options(), "-G", self.destination], capture_output=True, text=True)
        for line in proc.stdout.splitlines():
            key, _, value = line.partition(" ")
            if key == "hostname":
                return value.strip()
        raise HostError(f"{self}: ssh -G printed no hostname: {proc.stderr.strip()}")

    @property
    def address(self) -> str:
        """The numeric address the other hosts reach this one on."""
        name = self.address_override or self.ssh_hostname()
        try:
            return socket.getaddrinfo(name, None, type=socket.SOCK_STREAM)[0][4][0]
        except socket.gaierror as e:
            raise HostError(f"{self}: cannot resolve {name!r}: {e}") from None

    def __str__(self) -> str:
        return f"{self.role} host {self.destination}"


def line(*parts: str) -> str:
    return shlex.join(parts)


def env_line(env: dict[str, str]) -> str:
    """`env K=V ...` for the start of a remote command line (ssh passes no environment by default)."""
    return "env " + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) if env else ""


@dataclasses.dataclass
class Roles:
    server: Host
    backend: Host | None  # None: every service is external (EXTERNAL_SERVICES=all)
    clients: list[Host]

    @property
    def all(self) -> list[Host]:
        return [self.server] + ([self.backend] if self.backend else []) + self.clients

    def as_dict(self) -> dict:
        return {"server": self.server.destination, "backend": self.backend.destination if self.backend else None,
                "clients": [c.destination for c in self.clients]}


def configured() -> bool:
    return any(os.environ.get(k, "").strip() for k in ("SERVER_HOST", "BACKEND_HOST", "CLIENT_HOSTS"))


def roles_from_env(all_services_external: bool) -> Roles:
    server = os.environ.get("SERVER_HOST", "").strip()
    backend = os.environ.get("BACKEND_HOST", "").strip()
    clients = [c.strip() for c in os.environ.get("CLIENT_HOSTS", "").split(",") if c.strip()]
    missing = [name for name, v in (("SERVER_HOST", server), ("CLIENT_HOSTS", clients)) if not v]
    if not backend and not all_services_external:
        missing.append("BACKEND_HOST (or EXTERNAL_SERVICES=all)")
    if missing:
        raise HostError("a multi-host run needs " + ", ".join(missing) + " (see README, Multi-host runs)")
    if len(set(clients)) != len(clients):
        raise HostError(f"CLIENT_HOSTS names a host twice: {clients}")
    if server in clients:
        raise HostError(f"SERVER_HOST {server} is also a client host: the generator would share the server's CPUs")
    return Roles(Host("server", server, os.environ.get("SERVER_ADDR", "").strip()),
                 Host("backend", backend, os.environ.get("BACKEND_ADDR", "").strip()) if backend else None,
                 [Host(f"client{i + 1}", c) for i, c in enumerate(clients)])


# ---------------------------------------------------------------------- the checkout on each host

def checkout_dir() -> str:
    """Where the checkout lives on every host (HOSTS_CHECKOUT; relative paths are under the remote
    user's home directory)."""
    return os.environ.get("HOSTS_CHECKOUT", "").strip() or "reference-servers"


def shares_this_checkout(host: Host) -> bool:
    """True when HOSTS_CHECKOUT on `host` is this very directory (simulated hosts on this machine, or
    a shared file system): a marker written here is read there."""
    marker = ROOT / ".run" / "checkout-marker"
    marker.parent.mkdir(exist_ok=True)
    token = os.urandom(8).hex()
    marker.write_text(token)
    remote = f"{checkout_dir()}/{marker.relative_to(ROOT)}"
    proc = host.run(f"cat {shlex.quote(remote)} 2>/dev/null || true", check=False)
    return proc.stdout.strip() == token


def ship_checkout(host: Host) -> None:
    """Copy this checkout's files (tracked and untracked, not ignored: what `git status` sees) to the
    host with tar over ssh. Build outputs and run state stay behind: the host builds its own."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, check=True).stdout
    existing = b"\0".join(f for f in files.split(b"\0") if f and (ROOT / f.decode()).exists())
    tar = subprocess.run(["tar", "-c", "--null", "-T", "-"], cwd=ROOT, input=existing, capture_output=True, check=True)
    d = shlex.quote(checkout_dir())
    host.run(f"mkdir -p {d} && tar -x -C {d}", input=tar.stdout, text=False, timeout=600)
