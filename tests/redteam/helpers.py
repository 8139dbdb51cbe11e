"""Shared pieces of the red-team suite: run a JS attack agent and read what happened.

Every attack is a real JS agent run through the real engine (``run_captured``)
or the real CLI. The agent *tries* the attack and reports the outcome as its
result: ``{ok: true, value}`` when the host let it through, ``{ok: false,
name, message}`` when the host call threw. Tests then assert the exact denial
(error name, message fragment, audit rule) and that the forbidden effect did
not happen.
"""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from tests.runtime.helpers import run_captured

# An attack body runs inside an async function; whatever it returns is the loot.
PROBE = """\
export default async function (input) {
  try {
    const value = await (async () => {
%s
    })();
    return {ok: true, value: value === undefined ? null : value};
  } catch (e) {
    return {ok: false, name: e.name, message: e.message};
  }
}
"""


def probe_source(body: str) -> str:
    return PROBE % textwrap.indent(textwrap.dedent(body).strip("\n"), " " * 6)


def js(value: Any) -> str:
    """A Python value as a JS literal (strings safely quoted)."""
    return json.dumps(value)


@dataclass
class Outcome:
    value: Any
    stdout: str
    stderr: str
    denials: int
    audit: list[dict[str, Any]]
    root: Path

    @property
    def denied(self) -> list[dict[str, Any]]:
        return [e for e in self.audit if e["decision"] == "deny"]


def write_manifest(root: Path, permissions: dict | None, **keys: Any) -> None:
    manifest = {"name": "redteam-agent", "entry_point": "main.js", **keys}
    if permissions is not None:
        manifest["permissions"] = permissions
    (root / "agent.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))


def run_attack(
    root: Path,
    body: str | None = None,
    permissions: dict | None = None,
    *,
    source: str | None = None,
    manifest: dict | None = None,
    env: dict[str, str] | None = None,
    **options: Any,
) -> Outcome:
    """Write ``main.js`` (a probe around ``body``, or a whole ``source``) into ``root`` and run it."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "main.js").write_text(source if source is not None else probe_source(body or ""))
    write_manifest(root, permissions, **(manifest or {}))
    audit_path = root.parent / f"{root.name}.audit.jsonl"
    if audit_path.exists():
        audit_path.unlink()
    out = run_captured(root, env=env, audit_path=audit_path, **options)
    audit = [json.loads(line) for line in audit_path.read_text().splitlines() if line.strip()]
    return Outcome(out.result.value, out.stdout, out.stderr, out.result.denials, audit, root)


def assert_denied(
    out: Outcome,
    rule: str,
    fragment: str,
    *,
    kind: str = "PermissionDenied",
    capability: str | None = None,
    audited: bool = True,
) -> None:
    """The agent's attempt threw ``kind`` naming ``fragment``, and the audit log blames ``rule``.

    ``audited=False``: the policy allowed the path (an allow entry for ``rule``) and the
    capability itself refused the act (hard links, symlinks in a copied tree); the dispatcher
    then records that refusal as a deny entry ``<capability>.host-refusal``, counted like any denial.
    """
    value = out.value
    assert isinstance(value, dict) and value.get("ok") is False, f"attack was NOT denied: {value!r}"
    assert value["name"] == kind, value
    assert fragment in value["message"], value
    if not audited and kind != "PermissionDenied":
        # a cap hit after an allowed request (body size, redirects): a limit, not a policy denial
        assert out.audit and out.audit[-1]["rule"] == rule, out.audit[-1:]
        return
    if not audited:
        allow, refusal = out.audit[-2:]
        assert (allow["rule"], allow["decision"]) == (rule, "allow"), out.audit[-2:]
        assert refusal["decision"] == "deny" and refusal["rule"].endswith(".host-refusal"), refusal
        assert out.denials >= 1
        return
    assert out.denied, "no deny entry in the audit log"
    last = out.denied[-1]
    assert last["rule"] == rule, last
    if capability is not None:
        assert last["capability"] == capability, last
    assert out.denials >= 1


class NetViolation(AssertionError):
    """Raised by the red-team network guard (conftest.py) instead of leaving loopback."""


@dataclass(frozen=True)
class NetGuard:
    """Stand-ins for ``socket.socket.connect``/``connect_ex`` and ``socket.getaddrinfo``.

    They pass loopback connects and lookups of literals and ``localhost`` on to the functions
    they wrap, and refuse everything else, noting it in ``violations``. Built over the real
    functions by conftest.py; built over recorders by the guard's own test, so that testing the
    guard never needs a non-loopback connect or a real lookup.
    """

    connect: Callable[[socket.socket, Any], None]
    connect_ex: Callable[[socket.socket, Any], int]
    getaddrinfo: Callable[..., Any]
    violations: list[str]


def _is_loopback(host: Any) -> bool:
    try:
        addr = ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        addr = addr.ipv4_mapped
    return addr.is_loopback


def _is_literal(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def make_guard(
    connect: Callable[[socket.socket, Any], None],
    connect_ex: Callable[[socket.socket, Any], int],
    getaddrinfo: Callable[..., Any],
) -> NetGuard:
    violations: list[str] = []

    def check(sock: socket.socket, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6) and not _is_loopback(address[0]):
            violations.append(f"connect to {address!r}")
            raise NetViolation(f"red-team guard: refused to connect to non-loopback {address!r}")

    def guarded_connect(sock: socket.socket, address: Any) -> None:
        check(sock, address)
        return connect(sock, address)

    def guarded_connect_ex(sock: socket.socket, address: Any) -> int:
        check(sock, address)
        return connect_ex(sock, address)

    def guarded_getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name is None or name == "localhost" or _is_literal(name):
            return getaddrinfo(host, *args, **kwargs)
        if str(name).rstrip(".").endswith((".invalid", ".test")):
            # Reserved names are answered here, as the fake_dns tables do, not by a real resolver.
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        violations.append(f"DNS lookup of {name!r}")
        raise socket.gaierror(socket.EAI_NONAME, "red-team guard: no real DNS lookups")

    return NetGuard(guarded_connect, guarded_connect_ex, guarded_getaddrinfo, violations)


# --- processes ------------------------------------------------------------------------


def _state(pid: int) -> str | None:
    """The process state letter from /proc, or None if the pid is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return text.rsplit(")", 1)[1].split()[0]


def alive(pid: int) -> bool:
    """Running (a zombie is dead: killed, only not reaped by an init that does not reap)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _state(pid) not in (None, "Z", "X")


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes whose process group is ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            members.append(int(entry.name))
    return members


def wait_dead(pids: list[int], within: float = 3.0) -> list[int]:
    """Pids still alive after ``within`` seconds (normally none, at once)."""
    end = time.monotonic() + within
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.05)


def read_pids(path: Path) -> list[int]:
    return [int(x) for x in path.read_text().split()]
