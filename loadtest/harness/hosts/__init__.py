"""Multi-host runs: the hosts and how they are reached (OpenSSH), simulated hosts, and what runs on each."""
from harness.hosts.remote import (  # the package's public names, used by the rest of the harness
    Host, HostError, Roles, checkout_dir, configured, env_line, line, roles_from_env, shares_this_checkout,
    ship_checkout
)

__all__ = ["Host", "HostError", "Roles", "checkout_dir", "configured", "env_line", "line", "roles_from_env", "shares_this_checkout", "ship_checkout"]
