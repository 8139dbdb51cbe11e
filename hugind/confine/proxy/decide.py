"""Deciding, by the policy engine: which URL a request stands for, and whether it may go there.

Every target goes through ``engine.check_connect``, exactly like ``net.fetch``:
matched against the lists, resolved once (before anything is checked against
an address), classified (private and always-blocked ranges, IPv6 forms of
IPv4 ones included) and audited. What comes back is a ``NetTarget`` whose
``addresses`` are the only ones the relay may connect to: the proxy never
resolves a name itself.

The proxy's part is to hand the engine a URL that is exactly what the child
named: a CONNECT authority must be ``host:port`` and nothing else (a path,
credentials, a zone id or stray characters are a 400 before the engine sees
anything), and a forwarded request must name an absolute ``http://`` URL.
"""

from __future__ import annotations

import string
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from hugind.confine.proxy.base import Reply
from hugind.errors import HostCallError
from hugind.policy.audit import redact

if TYPE_CHECKING:
    from hugind.policy.engine import PolicyEngine
    from hugind.policy.net import NetTarget

_NAME_CHARS = frozenset(string.ascii_letters + string.digits + ".-_")  # a DNS-ish name or an IPv4 form
_IPV6_CHARS = frozenset(string.hexdigits + ":.")  # inside the brackets of an IPv6 literal


def connect_url(authority: str) -> str:
    """The URL a CONNECT target is checked as: ``https://host:port/``; Reply(400) if it is not host:port."""

    def bad() -> Reply:
        return Reply(400, f"proxy: CONNECT needs host:port, got {authority[:200]!r}")

    try:
        parts = urlsplit("//" + authority)
        port = parts.port
    except ValueError:
        raise bad() from None
    if parts.netloc != authority or parts.path or port is None or not 0 < port < 65536:
        raise bad()
    host = authority.rpartition(":")[0]
    if host.startswith("[") and host.endswith("]"):
        valid = len(host) > 2 and set(host[1:-1]) <= _IPV6_CHARS
    else:
        valid = bool(host) and set(host) <= _NAME_CHARS
    if not valid:
        raise bad()
    return f"https://{host}:{port}/"


def forward_url(target: str) -> str:
    """The URL a plain request is checked as: its absolute ``http://`` target; Reply(400) otherwise."""
    lowered = target.lower()
    if not lowered.startswith("http://"):
        hint = "use CONNECT for https" if lowered.startswith("https://") else "need http://..."
        raise Reply(400, f"proxy: the request target must be an absolute http:// URL ({hint})")
    return target


def decide(engine: PolicyEngine, url: str) -> NetTarget:
    """The one policy decision (audited by the engine); Reply(403) naming the rule if refused."""
    try:
        return engine.check_connect(url)
    except HostCallError as exc:
        rule = rule_of(engine, exc, url)
        raise Reply(403, f"denied by {rule}: {exc.message}", rule) from None


def rule_of(engine: PolicyEngine, exc: HostCallError, url: str) -> str:
    """The rule that refused ``url``: from the error if it carries one, else from the engine's audit entry."""
    rule = getattr(exc, "rule", None)
    if isinstance(rule, str):
        return rule
    wanted = redact(url)
    for entry in reversed(list(engine.audit.entries)):
        request = entry.get("request") or {}
        mine = entry.get("capability") == "network" and request.get("url") == wanted
        if mine and entry.get("decision") == "deny":
            return str(entry.get("rule"))
    return "network"
