"""The network policy's host lists: allowed domains and addresses, as plain frozen data.

Part of the policy model (``hugind.policy.model`` names them too), in a module of
their own so that a run whose policy lists no hosts never creates the two classes.
A leaf: it imports nothing of the policy package (the model imports it, lazily).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class DomainRule:
    """``example.com`` (exact) or ``*.example.com`` (any subdomain), optional port."""

    pattern: str
    port: int | None
    spec: str

    @property
    def wildcard(self) -> bool:
        return self.pattern.startswith("*.")


@dataclass(frozen=True)
class IpRule:
    """A literal address or CIDR range the guest may connect to, optional port."""

    network: IPNetwork
    port: int | None
    spec: str
