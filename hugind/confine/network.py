"""A run's network for its children: hugind's filtering proxy, started on first use.

(It also holds the run's zygotes, :mod:`hugind.confine.zygotes`: the run's one
service for its children, closed when the run ends.)

A confined child has an empty network namespace. When the policy allows
network, its one route out is a Unix socket bound into its sandbox, behind
which :class:`~hugind.confine.proxy.ChildNetProxy` decides every connection
with the run's own ``PolicyEngine`` (the rules of ``fetch``, audited the same
way). Inside the sandbox the forwarder listens on ``127.0.0.1:PROXY_PORT``
and the child's proxy variables point there.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the confinement stack is loaded only when a run starts a child
    from hugind.confine.command import ProxyEndpoint
    from hugind.confine.zygotes import ZygotePool

# Any free port of the child's own (empty) network namespace; the usual proxy port.
PROXY_PORT = 3128


class ChildNetwork:
    """Callable: the run's proxy endpoint, or None when the policy gives children no network."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self._lock = threading.Lock()
        self._proxy: Any = None  # ChildNetProxy, imported on first use
        self._dir: Path | None = None
        self._endpoint: ProxyEndpoint | None = None
        self._closed = False
        self._zygotes: ZygotePool | None = None

    @property
    def zygotes(self) -> ZygotePool | None:
        """The run's zygotes (see hugind.confine.zygotes), made on first use: this object is
        the one per-run service for children that the run closes, so they live and die with it."""
        with self._lock:
            if self._zygotes is None and not self._closed:
                from hugind.confine.zygotes import ZygotePool

                self._zygotes = ZygotePool()
            return self._zygotes

    def __call__(self) -> ProxyEndpoint | None:
        if not self.engine.policy.net.allow:
            return None
        with self._lock:
            if self._closed:
                return None
            if self._endpoint is None:
                import tempfile  # here, not at the top: most runs start no child (see design.md)

                from hugind.confine.command import ProxyEndpoint
                from hugind.confine.proxy import FORWARDER_PATH, ChildNetProxy, proxy_env

                # A 0700 directory of our own: the socket is bound into sandboxes by its directory.
                self._dir = Path(tempfile.mkdtemp(prefix="hugind-net-"))
                socket_path = self._dir / "proxy.sock"
                self._proxy = ChildNetProxy(self.engine, socket_path)
                self._proxy.start()
                self._endpoint = ProxyEndpoint(str(socket_path), PROXY_PORT, str(FORWARDER_PATH), proxy_env(PROXY_PORT))
            return self._endpoint

    def close(self) -> None:
        with self._lock:
            self._closed = True
            proxy, directory, zygotes = self._proxy, self._dir, self._zygotes
            self._proxy = self._dir = self._endpoint = self._zygotes = None
        if zygotes is not None:
            zygotes.close()
        if proxy is not None:
            proxy.close()
        if directory is not None:
            import shutil

            shutil.rmtree(directory, ignore_errors=True)
