"""Simulated hosts on one machine, for trying and testing the multi-host run without a second machine.

Each host is a network namespace with one veth link to a bridge, its own address, and its own sshd
with a host key made here; the harness reaches them with OpenSSH and a config file written here,
exactly as it reaches real hosts. Between roles traffic crosses veth links and the bridge, never
loopback. They share this machine's files, CPUs and memory: the network is what they separate.

`make sim-hosts-up` makes them and prints the settings that point a run at them; `make
sim-hosts-down` stops every process in them and removes them.
"""
import dataclasses
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import time

from harness.config import RUN_DIR

ROLES = ("server", "backend", "client1", "client2")
NETNS_PREFIX = "rsim-"
BRIDGE = "rsim-br0"
STATE = RUN_DIR / "sim-hosts"
SSH_READY_TIMEOUT = 15.0
STOP_TIMEOUT = 10.0  # SIGTERM to SIGKILL
KILL_WAIT = 2.0  # SIGKILL to reaped


class SimHostsError(RuntimeError):
    pass


@dataclasses.dataclass(frozen=True)
class SimHost:
    role: str
    address: str

    @property
    def netns(self) -> str:
        return NETNS_PREFIX + self.role

    @property
    def alias(self) -> str:
        """The name in the ssh config written here: what SERVER_HOST and the others are set to."""
        return "sim-" + self.role

    @property
    def veth(self) -> str:
        return NETNS_PREFIX + self.role  # the bridge's end; the namespace's end is eth0


def subnet() -> ipaddress.IPv4Network:
    raw = os.environ.get("SIM_HOSTS_SUBNET", "10.231.7.0/24")
    try:
        net = ipaddress.IPv4Network(raw)
    except ValueError as e:
        raise SimHostsError(f"SIM_HOSTS_SUBNET={raw!r}: {e}") from None
    if net.num_addresses < len(ROLES) + 3:
        raise SimHostsError(f"SIM_HOSTS_SUBNET={raw}: too small for the bridge and {len(ROLES)} hosts")
    return net


def hosts() -> list[SimHost]:
    addrs = list(subnet().hosts())
    return [SimHost(role, str(addrs[i + 1])) for i, role in enumerate(ROLES)]


def bridge_address() -> str:
    return str(next(subnet().hosts()))


def ssh_config_path():
    return STATE / "ssh_config"


def settings_line() -> str:
    """The settings that point a multi-host run at the simulated hosts."""
    by_role = {h.role: h.alias for h in hosts()}
    clients = ",".join(by_role[r] for r in ROLES if r.startswith("client"))
    return (f"SSH_CONFIG={ssh_config_path()} SERVER_HOST={by_role['server']} BACKEND_HOST={by_role['backend']} "
            f"CLIENT_HOSTS={clients}")


def _run(*cmd: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SimHostsError(f"{' '.join(cmd)}: exit {proc.returncode}: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def _require() -> None:
    if os.geteuid() != 0:
        raise SimHostsError("simulated hosts need root: network namespaces, veth links and a bridge")
    missing = [b for b in ("ip", "ssh", "ssh-keygen") if not shutil.which(b)]
    if not os.path.exists("/usr/sbin/sshd"):
        missing.append("sshd (Debian's openssh-server)")
    if missing:
        raise SimHostsError(f"missing {', '.join(missing)}: run `make setup`")


def existing_netns() -> list[str]:
    out = _run("ip", "-j", "netns", "list", check=False).stdout.strip()
    return [n["name"] for n in json.loads(out or "[]") if n["name"].startswith(NETNS_PREFIX)]


def processes(host: SimHost) -> list[int]:
    """Every process running in the host's namespace (its sshd included)."""
    out = _run("ip", "netns", "pids", host.netns, check=False).stdout
    return [int(p) for p in out.split()]


def link_counters(host: SimHost) -> dict:
    """Bytes and packets through the host's one link, read inside its namespace."""
    out = _run("ip", "-n", host.netns, "-s", "-j", "link", "show", "eth0").stdout
    stats = json.loads(out)[0]["stats64"]
    return {"rx_bytes": stats["rx"]["bytes"], "tx_bytes": stats["tx"]["bytes"],
            "rx_packets": stats["rx"]["packets"], "tx_packets": stats["tx"]["packets"]}


def _keygen(path, comment: str) -> str:
    if not path.exists():
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path))
    return path.parent.joinpath(path.name + ".pub").read_text().strip()


def _sshd_config(host: SimHost) -> str:
    d = STATE / host.role
    return "\n".join([
        f"ListenAddress {host.address}",
        f"HostKey {d / 'host_key'}",
        f"PidFile {d / 'sshd.pid'}",
        f"AuthorizedKeysFile {STATE / 'authorized_keys'}",
        "PermitRootLogin prohibit-password",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        # The state lives in the checkout's run directory, whose modes are the user's business.
        "StrictModes no",
        # One run opens many commands at once over a few master connections.
        "MaxSessions 64",
        "MaxStartups 64:30:128",
        "",
    ])


def _ssh_config() -> str:
    blocks = []
    for h in hosts():
        blocks.append("\n".join([
            f"Host {h.alias}",
            f"  HostName {h.address}",
            "  User root",
            f"  IdentityFile {STATE / 'id_ed25519'}",
            "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {STATE / 'known_hosts'}",
            "  StrictHostKeyChecking yes",
            "  BatchMode yes",
            "",
        ]))
    return "\n".join(blocks)


def _wait_for_ssh(host: SimHost) -> None:
    deadline = time.monotonic() + SSH_READY_TIMEOUT
    while True:
        proc = _run("ssh", "-F", str(ssh_config_path()), "-o", "ConnectTimeout=2", host.alias, "true", check=False)
        if proc.returncode == 0:
            return
        if time.monotonic() > deadline:
            log = STATE / host.role / "sshd.log"
            raise SimHostsError(f"{host.alias} ({host.address}) did not accept ssh within {SSH_READY_TIMEOUT:.0f}s: "
                                f"{proc.stderr.strip()}\n{log.read_text() if log.exists() else ''}")
        time.sleep(0.2)


def up() -> str:
    """Make (or keep) the simulated hosts; returns the settings line for a run."""
    _require()
    if sorted(existing_netns()) == sorted(h.netns for h in hosts()) and all(processes(h) for h in hosts()):
        for h in hosts():
            _wait_for_ssh(h)
        return settings_line()
    down()
    STATE.mkdir(parents=True, exist_ok=True)
    client_pub = _keygen(STATE / "id_ed25519", "reference-servers simulated-host client")
    (STATE / "authorized_keys").write_text(client_pub + "\n")
    prefix = subnet().prefixlen
    _run("ip", "link", "add", BRIDGE, "type", "bridge")
    _run("ip", "addr", "add", f"{bridge_address()}/{prefix}", "dev", BRIDGE)
    _run("ip", "link", "set", BRIDGE, "up")
    os.makedirs("/run/sshd", exist_ok=True)  # sshd's privilege-separation directory
    known = []
    for h in hosts():
        d = STATE / h.role
        d.mkdir(exist_ok=True)
        _run("ip", "netns", "add", h.netns)
        _run("ip", "link", "add", h.veth, "type", "veth", "peer", "name", "eth0", "netns", h.netns)
        _run("ip", "link", "set", h.veth, "master", BRIDGE, "up")
        _run("ip", "-n", h.netns, "addr", "add", f"{h.address}/{prefix}", "dev", "eth0")
        _run("ip", "-n", h.netns, "link", "set", "eth0", "up")
        _run("ip", "-n", h.netns, "link", "set", "lo", "up")
        host_pub = _keygen(d / "host_key", f"{h.alias} host key")
        known.append(f"{h.address} {' '.join(host_pub.split()[:2])}")
        (d / "sshd_config").write_text(_sshd_config(h))
        _run("ip", "netns", "exec", h.netns, "/usr/sbin/sshd", "-f", str(d / "sshd_config"),
             "-E", str(d / "sshd.log"))
    (STATE / "known_hosts").write_text("\n".join(known) + "\n")
    ssh_config_path().write_text(_ssh_config())
    for h in hosts():
        _wait_for_ssh(h)
    return settings_line()


def _kill_all(netns: str) -> None:
    def pids():
        return [int(p) for p in _run("ip", "netns", "pids", netns, check=False).stdout.split()]
    for sig in (signal.SIGCONT, signal.SIGTERM):
        for pid in pids():
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
    deadline = time.monotonic() + STOP_TIMEOUT
    while pids() and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # A killed process leaves the namespace only once the kernel has reaped it; one still dying
    # keeps the namespace's devices (its end of the veth pair) alive past `ip netns del`.
    deadline = time.monotonic() + KILL_WAIT
    while pids() and time.monotonic() < deadline:
        time.sleep(0.05)


def down() -> list[str]:
    """Stop every process in every simulated host, remove the namespaces and the bridge; returns the
    namespaces removed. Safe to call when nothing is up."""
    _require()
    removed = []
    for netns in existing_netns():
        _kill_all(netns)
        _run("ip", "netns", "del", netns)
        removed.append(netns)
    # The veth pairs too: `ip netns del` leaves them to the kernel's asynchronous namespace cleanup,
    # and an up() right after would meet a bridge end still there ("RTNETLINK answers: File exists",
    # seen in CI). Deleting that end removes the pair at once.
    for h in hosts():
        if _run("ip", "link", "show", h.veth, check=False).returncode == 0:
            _run("ip", "link", "del", h.veth, check=False)  # gone meanwhile is as good
    if _run("ip", "link", "show", BRIDGE, check=False).returncode == 0:
        _run("ip", "link", "del", BRIDGE)
    shutil.rmtree(STATE, ignore_errors=True)
    return removed
