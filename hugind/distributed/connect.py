"""Import Ray and join (or start) a cluster, for ``--ray [ADDRESS]``.

Nothing here is imported by a run without ``--ray``: Ray's import alone costs
seconds, and it is an optional extra.
"""

from __future__ import annotations

import logging
import os
import socket
from types import ModuleType

from hugind.distributed.fault_handlers import fault_handlers_kept
from hugind.errors import UsageError

INSTALL_HINT = "--ray needs Ray: pip install 'hugind[ray]'"
LOCAL = "local"  # what a bare --ray means: ray.init()'s own choice (RAY_ADDRESS, a running cluster, or a new one)
PROBE_TIMEOUT_S = 5.0


def _probe(address: str) -> None:
    """Fail fast on a host:port nobody listens on: Ray itself retries for minutes."""
    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S):
            pass
    except (OSError, ValueError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise UsageError(f"--ray: cannot reach a Ray cluster at {address}: {reason}") from None


def _unnamed(address: str | None) -> bool:
    """A bare ``--ray``: ``ray.init`` chooses the cluster."""
    return address in (None, "", LOCAL)


def _is_local(address: str | None) -> bool:
    """Whether ``address`` means an instance this process starts for this machine alone."""
    return _unnamed(address) and not os.environ.get("RAY_ADDRESS")


def require_ray(address: str | None = None) -> ModuleType:
    """The ``ray`` module, or a UsageError (exit 2) saying how to install it.

    The first import of Ray in the process must come through here: Ray reads
    the settings of ``private_ray_env`` when it is imported."""
    private_ray_env(local=_is_local(address))
    try:
        import ray
    except ImportError:
        raise UsageError(INSTALL_HINT) from None
    return ray


def connect(address: str | None) -> bool:
    """Join the cluster at ``address`` (``None``/``"local"``: let ``ray.init`` choose;
    ``"auto"``: one already running on this machine). Returns whether this call
    connected, i.e. whether the caller should ``ray.shutdown()`` when done; a
    process already connected (a test, a notebook) keeps its connection."""
    ray = require_ray(address)
    if ray.is_initialized():
        return False
    target = None if _unnamed(address) else address
    if target is not None:
        _probe(target)
    try:
        with fault_handlers_kept():
            ray.init(
                address=target,
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,  # the agents' output comes back with each result, not on our stderr
            )
    except (ConnectionError, ValueError, RuntimeError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise UsageError(f"--ray: cannot connect to the Ray cluster at {target or 'this machine'}: {first}") from None
    return True


def private_ray_env(*, local: bool) -> None:
    """Ray's defaults that hugind does not take on the user's behalf (a value the user set wins).

    * Usage reports: Ray sends them to its makers unless told not to; a run of
      someone else's agent has no business reporting anything anywhere.
    * A Ray instance this process starts for itself listens on every interface
      by default, for other machines to join; one started for this machine
      alone listens on loopback. Ray's switch for that is its "no clusters"
      mode (named for the platforms where it is the default), read when Ray
      is imported."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if local:
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")


def disconnect(connected: bool) -> None:
    if connected:
        with fault_handlers_kept():
            require_ray().shutdown()
