"""How a host name becomes addresses for the network check (``decide_connect``).

Apart from ``hugind.policy.net`` so the policy engine can hold the resolver it
uses from its start without loading the network rules, which a run that never
connects does not need.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

Resolver = Callable[[str, int, float], Sequence[str]]


def system_resolver(
    host: str, port: int, timeout: float, *, lookup: Callable[..., Sequence[Any]] | None = None
) -> list[str]:
    """getaddrinfo once, bounded by ``timeout`` (the lookup thread is abandoned).

    ``lookup`` stands in for ``socket.getaddrinfo`` (same arguments, same rows): the seam a
    test uses for a lookup that outlives its timeout, with no DNS query. Callers leave it out.
    """
    import socket  # here: a run that never connects does not load it

    getaddrinfo = lookup or socket.getaddrinfo

    box: dict[str, object] = {}
    done = threading.Event()

    def run() -> None:
        try:
            box["rows"] = getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError as exc:
            box["error"] = exc
        done.set()

    threading.Thread(target=run, name="hugind-resolve", daemon=True).start()
    if not done.wait(timeout):
        raise OSError(f"lookup timed out after {timeout:g}s")
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    seen: list[str] = []
    for row in box["rows"]:  # type: ignore[union-attr]
        address = str(row[4][0]).split("%")[0]
        if address not in seen:
            seen.append(address)
    return seen
