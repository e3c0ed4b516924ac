"""The backing services (Redis, MariaDB, memcached): run as local processes, and talked to as a client."""
from harness.services.local import (  # the package's public names, used by the rest of the harness
    ServiceError, down, freeze, mariadb_thread_handling, pid, start, status, stop, tail, thaw, up
)

__all__ = ["ServiceError", "down", "freeze", "mariadb_thread_handling", "pid", "start", "status", "stop", "tail", "thaw", "up"]
