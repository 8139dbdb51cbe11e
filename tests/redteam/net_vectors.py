"""Network attack vectors of the red-team suite, as data, and the loopback test that splits them.

Two files replay these: ``test_net_decisions.py`` asks the policy engine about every vector
(no socket, no DNS), and ``test_net_attacks.py`` runs real JS agents only on the vectors that
``stays_on_loopback`` accepts, so that a broken rule can at worst reach this machine's loopback.
Templates: ``{port}`` is the allowed loopback server's port, ``{other}`` a second server's.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Iterable
from typing import TypeVar

# (host as written in the URL, rule, message fragment): loopback in disguise, aimed at the
# server's port under the default policy (private networks blocked).
LOOPBACK_DISGUISES: list[tuple[str, str, str]] = [
    ("127.0.0.1", "network.block_private_networks", "127.0.0.0/8 (loopback)"),
    ("localhost", "network.block_private_networks", "host localhost resolves to 127.0.0.1"),
    ("0.0.0.0", "network.blocked-range", "0.0.0.0/8"),
    ("[::1]", "network.block_private_networks", "::1/128 (loopback)"),
    ("2130706433", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
    ("0x7f000001", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
    ("0177.0.0.1", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
    ("127.1", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
    ("127.000.000.001", "network.block_private_networks", "host 127.0.0.1"),
    ("[::ffff:127.0.0.1]", "network.block_private_networks", "via IPv4-mapped 127.0.0.1"),
    ("[0:0:0:0:0:ffff:7f00:1]", "network.block_private_networks", "via IPv4-mapped 127.0.0.1"),
    ("LOCALHOST.", "network.block_private_networks", "host localhost resolves to"),
]

# (id, Location header, rule, message fragment): where a server that only ``{port}`` is allowed
# for tries to send the agent next.
REDIRECT_TARGETS: list[tuple[str, str, str, str]] = [
    ("other-port", "http://127.0.0.1:{other}/hello", "network.allowed_ips", "port {other} is not in allowed_ips"),
    ("metadata", "http://169.254.169.254/latest/meta-data/", "network.block_private_networks", "169.254.0.0/16"),
    ("scheme-relative-metadata", "//169.254.169.254/latest/", "network.block_private_networks", "169.254.0.0/16"),
    ("rfc1918", "http://10.0.0.1:{port}/", "network.block_private_networks", "10.0.0.0/8"),
    ("localhost-name", "http://localhost:{port}/hello", "network.allowed_domains", "host localhost port"),
    ("hex-other-port", "http://0x7f000001:{other}/hello", "network.allowed_ips", "port {other} is not in allowed_ips"),
    (
        "mapped-other-port",
        "http://[::ffff:127.0.0.1]:{other}/",
        "network.allowed_ips",
        "port {other} is not in allowed_ips",
    ),
    ("file", "file:///etc/passwd", "network.url", "scheme file: is not allowed"),
    ("gopher", "gopher://127.0.0.1:{port}/", "network.url", "scheme gopher: is not allowed"),
    ("credentials", "http://127.0.0.1:{port}@127.0.0.1:{other}/", "network.url", "credentials"),
]

# (id, URL, rule, message fragment) under ``allowlist_policy``: confusions between the allowed
# name and another one. Every one is refused before any name is resolved.
ALLOWLIST_TRICKS: list[tuple[str, str, str, str]] = [
    (
        "suffix-append",
        "http://svc.test.evil.invalid:{port}/",
        "network.allowed_domains",
        "host svc.test.evil.invalid port",
    ),
    ("userinfo", "http://svc.test@evil.invalid:{port}/", "network.url", "credentials"),
    ("query", "http://evil.invalid:{port}/?svc.test", "network.allowed_domains", "host evil.invalid port"),
    ("fragment", "http://evil.invalid:{port}#@svc.test", "network.allowed_domains", "host evil.invalid port"),
    ("no-dot-suffix", "http://evilsvc.test:{port}/", "network.allowed_domains", "host evilsvc.test port"),
    ("subdomain-of-exact", "http://x.svc.test:{port}/", "network.allowed_domains", "host x.svc.test port"),
    ("other-port", "http://svc.test:1/", "network.allowed_domains", "host svc.test port 1 is not"),
    ("backslash", "http://svc.test\\@evil.invalid/", "network.url", "backslashes"),
    ("encoded-slash", "http://svc.test%2F@evil.invalid/", "network.url", "credentials"),
    ("ideographic-dot", "http://svc.test\u3002evil.invalid/", "network.allowed_domains", "is not in allowed_domains"),
]

# (id, every answer of one lookup of an allowed name, message fragment): one blocked answer
# among good ones denies the name (rule network.block_private_networks).
MIXED_ANSWERS: list[tuple[str, list[str], str]] = [
    ("metadata", ["127.0.0.1", "169.254.169.254"], "resolves to 169.254.169.254"),
    ("rfc1918", ["127.0.0.1", "10.1.2.3"], "resolves to 10.1.2.3"),
    ("mapped-private", ["127.0.0.1", "::ffff:192.168.0.1"], "via IPv4-mapped 192.168.0.1"),
    ("unnamed-loopback", ["127.0.0.1", "127.0.0.2"], "resolves to 127.0.0.2"),
]

# Successive answers for the allowed name ``svc.test`` (DNS rebinding): the check pins the
# connection to the first; the later ones must each be judged on their own.
REBINDING: dict[str, list[tuple[list[str], str]]] = {
    # (answers of one lookup, the fragment of the denial; "" for the allowed first answer)
    "off-machine": [
        (["127.0.0.1"], ""),
        (["10.0.0.1"], "resolves to 10.0.0.1"),
        (["169.254.169.254"], "169.254.0.0/16"),
    ],
    "loopback-only": [(["127.0.0.1"], ""), (["127.0.0.2"], "resolves to 127.0.0.2"), (["127.0.0.3"], "127.0.0.0/8")],
}


def allowlist_policy(port: int) -> dict:
    """The allowed name ``svc.test`` and the address it resolves to, both on ``port`` only."""
    return {
        "network": {
            "allow": True,
            "allowed_domains": [f"svc.test:{port}"],
            "allowed_ips": [f"127.0.0.1:{port}"],
        }
    }


# --- which vectors may be sent for real -----------------------------------------------------

_AUTHORITY_END = re.compile(r"[/?#]")
# Where a confused parser could take the host from: either side of '@' or '\'.
_HOST_SPLIT = re.compile(r"[@\\]")
# The characters of the numeric forms inet_aton reads (127.1, 0x7f000001, 0177.0.0.1); checked
# first because inet_aton ignores anything after a space ("127.0.0.1 evil.com").
_NUMERIC = re.compile(r"[0-9a-fA-FxX.]+")


def _names_loopback(candidate: str) -> bool:
    """Whether ``candidate`` (``host``, ``host:port``, ``[v6]:port`` or empty) can only mean loopback."""
    if candidate.startswith("["):
        if "]" not in candidate:
            return False
        host = candidate[1 : candidate.index("]")]
    elif candidate.count(":") > 1:
        return False  # an unbracketed IPv6 form: no reading of it is reliably loopback
    else:
        host = candidate.split(":")[0]
    host = host.lower().removesuffix(".")
    if host in ("", "localhost"):
        return True  # no host at all, or the name /etc/hosts answers with loopback
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
            addr = addr.ipv4_mapped  # the kernel sends ::ffff:a.b.c.d to a.b.c.d
        return addr.is_loopback
    if not _NUMERIC.fullmatch(host):
        return False
    try:
        return socket.inet_aton(host)[0] == 127
    except OSError:
        return False


def stays_on_loopback(url: str) -> bool:
    """Whether every host a reader of ``url`` could pick (even a wrong one) is loopback.

    Independent of hugind's parser on purpose: it decides which attacks may run end to end,
    so a bug in the parser under test must not widen it. Ports are ignored.
    """
    rest = url.split("//", 1)[1] if "//" in url else ""
    authority = _AUTHORITY_END.split(rest, maxsplit=1)[0]
    return all(_names_loopback(part) for part in _HOST_SPLIT.split(authority))


def answers_stay_on_loopback(answers: Iterable[str]) -> bool:
    """Whether every address of a (scripted) DNS answer is loopback."""
    return all(_names_loopback(f"[{a}]" if ":" in a else a) for a in answers)


Vector = TypeVar("Vector")


def loopback_only(vectors: Iterable[Vector], url: Callable[[Vector], str]) -> list[Vector]:
    """The vectors whose URL (``{port}``/``{other}`` filled in) stays on loopback."""
    return [v for v in vectors if stays_on_loopback(url(v).format(port=1, other=2))]
