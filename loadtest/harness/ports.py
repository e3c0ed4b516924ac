"""Ports on this machine: whether something listens on one, and one that is free."""
import socket


def listening(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def free_port(host: str) -> int:
    """One the kernel has just handed out, so nothing listens on it (yet)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]
