"""Network decisions: URL and host parsing, address classification, allow lists.

Addresses are classified against an explicit CIDR table rather than
``ipaddress``'s ``is_private`` family (whose answers changed across Python
versions). Hostnames in the numeric forms ``inet_aton`` accepts
(``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``127.1``) are turned into
the address they denote before anything else looks at them, and IPv6 forms
that embed an IPv4 address (mapped, NAT64, 6to4, compatible, translated) are
classified by that IPv4 address too.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from urllib.parse import urlsplit

from hugind.policy.host_rules import DomainRule, IPNetwork, IpRule
from hugind.policy.model import Denied, NetPolicy
from hugind.policy.resolver import Resolver, system_resolver  # noqa: F401  (named here too)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

SCHEMES = {"http": 80, "https": 443}
MAX_URL_LENGTH = 8192


@dataclass(frozen=True)
class BlockedRange:
    network: IPNetwork
    label: str
    always: bool = False  # blocked even with block_private_networks off or an allowed_ips entry


def _ranges(rows: list[tuple[str, str, bool]]) -> tuple[BlockedRange, ...]:
    return tuple(BlockedRange(ipaddress.ip_network(cidr), label, always) for cidr, label, always in rows)


# Always-blocked rows come first so they win the label.
BLOCKED_V4 = _ranges(
    [
        ("0.0.0.0/8", "unspecified/'this network'", True),
        ("255.255.255.255/32", "broadcast", True),
        ("224.0.0.0/4", "multicast", True),
        ("240.0.0.0/4", "reserved", True),
        ("127.0.0.0/8", "loopback", False),
        ("10.0.0.0/8", "private, RFC 1918", False),
        ("172.16.0.0/12", "private, RFC 1918", False),
        ("192.168.0.0/16", "private, RFC 1918", False),
        ("100.64.0.0/10", "carrier-grade NAT, RFC 6598", False),
        ("169.254.0.0/16", "link-local/metadata", False),
        ("192.0.0.0/24", "IETF protocol assignments", False),
        ("192.0.2.0/24", "documentation, TEST-NET-1", False),
        ("192.88.99.0/24", "6to4 relay anycast", False),
        ("198.18.0.0/15", "benchmarking", False),
        ("198.51.100.0/24", "documentation, TEST-NET-2", False),
        ("203.0.113.0/24", "documentation, TEST-NET-3", False),
    ]
)
BLOCKED_V6 = _ranges(
    [
        ("::/128", "unspecified", True),
        ("ff00::/8", "multicast", True),
        ("::1/128", "loopback", False),
        ("64:ff9b:1::/48", "local-use NAT64", False),
        ("100::/64", "discard-only", False),
        ("2001::/23", "IETF protocol assignments, incl. Teredo", False),
        ("2001:db8::/32", "documentation", False),
        ("3fff::/20", "documentation", False),
        ("fc00::/7", "unique local", False),
        ("fe80::/10", "link-local", False),
        ("fec0::/10", "site-local", False),
    ]
)

# IPv6 prefixes whose low 32 bits (or, for 6to4, bits 16..48) are an IPv4 address.
_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_SIXTOFOUR = ipaddress.ip_network("2002::/16")
_COMPAT = ipaddress.ip_network("::/96")


def embedded_ipv4(addr: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, str] | None:
    """The IPv4 address an IPv6 form carries, and the name of the form."""
    low32 = ipaddress.IPv4Address(int(addr) & 0xFFFFFFFF)
    if addr in _MAPPED:
        return low32, "IPv4-mapped"
    if addr in _TRANSLATED:
        return low32, "IPv4-translated"
    if addr in _NAT64:
        return low32, "NAT64"
    if addr in _SIXTOFOUR:
        return ipaddress.IPv4Address((int(addr) >> 80) & 0xFFFFFFFF), "6to4"
    if addr in _COMPAT and int(addr) > 1:
        return low32, "IPv4-compatible"
    return None


@dataclass(frozen=True)
class BlockHit:
    range: BlockedRange
    via: str | None = None  # e.g. "IPv4-mapped 127.0.0.1" when found through an embedded address

    def describe(self) -> str:
        text = f"in blocked range {self.range.network} ({self.range.label})"
        return f"{text} via {self.via}" if self.via else text


def classify(addr: IPAddress) -> BlockHit | None:
    """The blocked range ``addr`` falls in, or None for a public address."""
    if isinstance(addr, ipaddress.IPv6Address):
        inner = embedded_ipv4(addr)
        if inner is not None:
            hit = classify(inner[0])
            if hit is not None:
                return BlockHit(hit.range, f"{inner[1]} {inner[0]}")
        table = BLOCKED_V6
    else:
        table = BLOCKED_V4
    for row in table:
        if addr in row.network:
            return BlockHit(row)
    return None


def unmap(addr: IPAddress) -> IPAddress:
    """``::ffff:a.b.c.d`` is the host a.b.c.d; every other address is itself."""
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


# --- host names -------------------------------------------------------------


def _aton_part(text: str) -> int:
    if text[:2].lower() == "0x":
        digits = text[2:]
        return int(digits, 16) if digits else 0
    if len(text) > 1 and text.startswith("0"):
        return int(text[1:], 8)
    if not text.isdigit():
        raise ValueError(text)
    return int(text)


def parse_inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address a numeric host denotes, the way ``inet_aton`` reads it.

    Returns None when ``host`` is not numeric at all (an ordinary name);
    raises ValueError when it looks numeric but is not a valid address.
    """
    labels = host.split(".")
    last = labels[-1]
    looks_numeric = last.isdigit() or (last[:2].lower() == "0x" and _is_hex(last[2:]))
    if not looks_numeric:
        return None
    if len(labels) > 4 or any(not label for label in labels):
        raise ValueError(host)
    try:
        parts = [_aton_part(label) for label in labels]
    except ValueError:
        raise ValueError(host) from None
    head, tail = parts[:-1], parts[-1]
    if any(p > 255 for p in head) or tail >= 1 << (8 * (5 - len(parts))):
        raise ValueError(host)
    value = 0
    for i, p in enumerate(head):
        value |= p << (24 - 8 * i)
    return ipaddress.IPv4Address(value | tail)


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdefABCDEF" for c in text)


_NAME_CHARS = set("abcdefghijklmnopqrstuvwxyz0123456789-_")


def normalize_name(name: str) -> str:
    """Lower-case, drop one trailing dot, IDNA-encode; ValueError if not a DNS name."""
    text = name.removesuffix(".")
    if not text:
        raise ValueError("empty host name")
    if not text.isascii():
        try:
            text = text.encode("idna").decode("ascii")
        except UnicodeError:
            raise ValueError(f"invalid international host name {name!r}") from None
    text = text.lower()
    labels = text.split(".")
    if len(text) > 253 or any(not label or len(label) > 63 for label in labels):
        raise ValueError(f"invalid host name {name!r}")
    if any(not set(label) <= _NAME_CHARS for label in labels):
        raise ValueError(f"invalid character in host name {name!r}")
    return text


def parse_host(host: str) -> IPAddress | str:
    """An address for literal and numeric forms, else the normalized name."""
    if ":" in host:
        if "%" in host:
            raise ValueError(f"IPv6 zone identifiers are not accepted: {host!r}")
        return ipaddress.IPv6Address(host)
    bare = host.removesuffix(".")
    numeric = parse_inet_aton(bare) if bare else None
    if numeric is not None:
        return numeric
    return normalize_name(host)


# --- allow-list entries ------------------------------------------------------


def _split_port(spec: str) -> tuple[str, int | None]:
    """``host:port`` / ``[v6]:port`` / bare ``host`` or ``v6``."""
    if spec.startswith("["):
        end = spec.find("]")
        if end < 0:
            raise ValueError("unclosed '['")
        rest = spec[end + 1 :]
        if rest and not rest.startswith(":"):
            raise ValueError("junk after ']'")
        return spec[1:end], _port(rest[1:]) if rest else None
    if spec.count(":") == 1:
        host, port = spec.split(":")
        return host, _port(port)
    return spec, None


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"invalid port {text!r}")
    return int(text)


def parse_domain_rule(spec: str) -> DomainRule:
    host, port = _split_port(spec.strip())
    wildcard = host.startswith("*.")
    name = normalize_name(host[2:] if wildcard else host)
    if "*" in name:
        raise ValueError("'*' is only allowed as a leading '*.' label")
    if not wildcard and parse_inet_aton(name) is not None:
        raise ValueError("an IP address belongs in allowed_ips")
    return DomainRule(("*." if wildcard else "") + name, port, spec)


def parse_ip_rule(spec: str) -> IpRule:
    host, port = _split_port(spec.strip())
    return IpRule(ipaddress.ip_network(host, strict=False), port, spec)


def domain_matches(rule: DomainRule, name: str, port: int) -> bool:
    if rule.port is not None and rule.port != port:
        return False
    if rule.wildcard:
        return name.endswith(rule.pattern[1:])
    return name == rule.pattern


def ip_matches(rule: IpRule, addr: IPAddress, port: int) -> bool:
    if rule.port is not None and rule.port != port:
        return False
    addr = unmap(addr)
    return addr.version == rule.network.version and addr in rule.network


# --- URLs and the connect decision ------------------------------------------


@dataclass(frozen=True)
class NetTarget:
    """A checked request target: connect only to ``addresses``."""

    url: str  # normalized URL (scheme://host[:port]/path?query), what the guest sees
    scheme: str
    host: str  # normalized name, or the address for literal hosts
    port: int
    target: str  # path?query as sent in the request line
    addresses: tuple[str, ...]  # checked addresses to pin the connection to
    is_ip: bool

    @property
    def origin(self) -> tuple[str, str, int]:
        return (self.scheme, self.host, self.port)

    @property
    def host_header(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if SCHEMES[self.scheme] == self.port else f"{host}:{self.port}"


@dataclass(frozen=True)
class ParsedUrl:
    scheme: str
    host: IPAddress | str
    port: int
    target: str

    def normalized(self) -> str:
        host = f"[{self.host}]" if isinstance(self.host, ipaddress.IPv6Address) else str(self.host)
        port = "" if SCHEMES[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{host}{port}{self.target}"


def parse_url(url: str) -> ParsedUrl:
    """Split an absolute http(s) URL; Denied (rule ``network.url``) if unusable."""

    def bad(why: str) -> Denied:
        return Denied("network.url", f"network: {why}")

    if len(url) > MAX_URL_LENGTH:
        raise bad(f"URL longer than {MAX_URL_LENGTH} characters")
    if any(ord(c) <= 0x20 or ord(c) == 0x7F or c == "\\" for c in url):
        raise bad("URL contains whitespace, control characters or backslashes")
    try:
        parts = urlsplit(url)
    except ValueError as exc:  # unbalanced or invalid brackets ("http://[::1/", "http://[]/", "[127.0.0.1]")
        raise bad(f"malformed URL {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in SCHEMES:
        raise bad(f"scheme {parts.scheme + ':' if parts.scheme else '(none)'} is not allowed (only http, https)")
    netloc = parts.netloc
    if not netloc:
        raise bad(f"URL has no host: {url!r}")
    if "@" in netloc:
        raise bad("URLs with credentials (user@host) are not allowed")
    try:
        raw_host, port = _split_port(netloc) if not netloc.endswith(":") else (netloc[:-1], None)
        if raw_host.startswith("[") or "%" in raw_host:
            raise ValueError("malformed host")
        host = parse_host(raw_host)
    except ValueError as exc:
        raise bad(f"invalid host in URL {url!r}: {exc}") from None
    if ":" in raw_host and not netloc.startswith("["):
        raise bad(f"IPv6 addresses must be bracketed: {url!r}")
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return ParsedUrl(scheme, host, port if port is not None else SCHEMES[scheme], target)


def _exempt(policy: NetPolicy, addr: IPAddress, port: int, hit: BlockHit) -> bool:
    """Whether a blocked address passes anyway.

    Never for the always-blocked ranges. Otherwise when block_private_networks
    is off, or when an ``allowed_ips`` entry covering the address lies itself
    inside the blocked range: naming ``127.0.0.1`` or ``10.1.0.0/16`` allows
    them on purpose, while a broad entry such as ``0.0.0.0/0`` exempts nothing.
    """
    if hit.range.always:
        return False
    if not policy.block_private_networks:
        return True
    blocked = hit.range.network
    return any(
        ip_matches(rule, addr, port) and rule.network.version == blocked.version and rule.network.subnet_of(blocked)  # type: ignore[arg-type]
        for rule in policy.allowed_ips
    )


def _named(policy: NetPolicy, addr: IPAddress, hit: BlockHit) -> bool:
    """Whether an allowed_ips entry inside the blocked range covers ``addr`` (on any port)."""
    blocked = hit.range.network
    plain = unmap(addr)
    return any(
        rule.network.version == plain.version == blocked.version
        and plain in rule.network
        and rule.network.subnet_of(blocked)  # type: ignore[arg-type]
        for rule in policy.allowed_ips
    )


def _check_address(policy: NetPolicy, addr: IPAddress, port: int, name: str | None) -> None:
    hit = classify(addr)
    if hit is None or _exempt(policy, addr, port, hit):
        return
    where = f"host {addr} is" if name is None else f"host {name} resolves to {addr}, which is"
    rule = "network.blocked-range" if hit.range.always else "network.block_private_networks"
    raise Denied(rule, f"network: {where} {hit.describe()}")


def decide_connect(policy: NetPolicy, url: str, resolver: Resolver, timeout: float) -> NetTarget:
    """Check ``url`` against ``policy``; resolve once; raise Denied or return the target."""
    if not policy.allow:
        raise Denied("network.allow", "network: disabled (permissions.network.allow is false)")
    parsed = parse_url(url)
    host, port = parsed.host, parsed.port
    if not isinstance(host, str):
        # Report the blocked range first, unless allowed_ips names this address for another
        # port: then the port is what is wrong, and the allowed_ips message says so.
        hit = classify(host)
        if hit is not None and not _named(policy, host, hit):
            _check_address(policy, host, port, None)
        if policy.restrict_hosts and not any(ip_matches(rule, host, port) for rule in policy.allowed_ips):
            raise Denied("network.allowed_ips", f"network: address {host} port {port} is not in allowed_ips")
        _check_address(policy, host, port, None)
        addresses: list[IPAddress] = [host]
    else:
        if policy.restrict_hosts and not any(domain_matches(r, host, port) for r in policy.allowed_domains):
            raise Denied("network.allowed_domains", f"network: host {host} port {port} is not in allowed_domains")
        try:
            addresses = [ipaddress.ip_address(a) for a in resolver(host, port, timeout)]
        except (OSError, ValueError) as exc:
            raise Denied("network.resolve", f"network: cannot resolve host {host}: {exc}") from None
        if not addresses:
            raise Denied("network.resolve", f"network: host {host} resolved to no address")
        for addr in addresses:
            _check_address(policy, addr, port, host)
    return NetTarget(
        url=parsed.normalized(),
        scheme=parsed.scheme,
        host=str(host),
        port=port,
        target=parsed.target,
        addresses=tuple(str(a) for a in addresses),
        is_ip=not isinstance(host, str),
    )
