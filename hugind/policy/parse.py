"""Build a :class:`Policy` from the manifest's ``permissions:``, a preset and ``--strict``.

Every key is checked; an unknown key or a wrong type raises
``ManifestError`` naming the exact key path (``permissions.network.alowed_domains``).
A preset has the same ``permissions:`` shape and can only tighten: lists are
intersected, caps take the minimum, ``allow`` flags are and-ed,
``block_private_networks`` and ``env_clear`` are or-ed, and its
``runtime_fs_mode`` is the most the manifest may use.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hugind.errors import ManifestError
from hugind.policy.model import (
    FS_MODES,
    FsPolicy,
    FsRoot,
    Limits,
    NetPolicy,
    Policy,
    ShellPolicy,
)

if TYPE_CHECKING:  # made by the first policy that lists hosts (hugind.policy.host_rules)
    from hugind.policy.host_rules import DomainRule, IpRule

STRICT_DEFAULT_FUEL = 10_000_000_000
PRESET_KEYS = ("name", "description", "runtime_fs_mode", "permissions")


def _fail(where: str, message: str) -> ManifestError:
    return ManifestError(f"{where}: {message}")


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


# --- scalar checkers: (value, where, root) -> normalized ----------------------------


def _bool(value: Any, where: str, _root: Path) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, f"must be true or false, got {_type_name(value)}")
    return value


# The checkers with bounds (and _rules) take them first and are bound with ``partial`` in
# SECTIONS, so a check runs this module function at each key rather than a closure made
# once at import, which a mutation run cannot reach (bench/mutation.py).
def _number(low: float, high: float, value: Any, where: str, _root: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not low < value <= high:
        raise _fail(where, f"must be a number of seconds in ({low:g}, {high:g}], got {value!r}")
    return float(value)


def _integer(low: int, high: int, value: Any, where: str, _root: Path) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise _fail(where, f"must be an integer in [{low}, {high}], got {value!r}")
    return value


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list):
        raise _fail(where, f"must be a list, got {_type_name(value)}")
    for i, item in enumerate(value):
        if not isinstance(item, str) or not item or "\0" in item:
            raise _fail(f"{where}[{i}]", f"must be a non-empty string, got {item!r}")
    return value


def _roots(value: Any, where: str, root: Path) -> tuple[FsRoot, ...]:
    out = []
    for i, spec in enumerate(_strings(value, where)):
        if spec.startswith("~"):
            raise _fail(f"{where}[{i}]", f"'~' is not expanded; write the path out ({spec!r})")
        out.append(FsRoot(spec, Path(os.path.realpath(os.path.join(root, spec)))))
    return tuple(out)


def _domain_rule(spec: str) -> Any:
    from hugind.policy.net import parse_domain_rule  # the network rules load only for a policy naming hosts

    return parse_domain_rule(spec)


def _ip_rule(spec: str) -> Any:
    from hugind.policy.net import parse_ip_rule

    return parse_ip_rule(spec)


def _rules(parse: Callable[[str], Any], value: Any, where: str, _root: Path) -> tuple[Any, ...]:
    out = []
    for i, spec in enumerate(_strings(value, where)):
        try:
            out.append(parse(spec))
        except ValueError as exc:
            raise _fail(f"{where}[{i}]", f"invalid entry {spec!r}: {exc}") from None
    return tuple(out)


def _programs(value: Any, where: str, _root: Path) -> tuple[str, ...]:
    items = _strings(value, where)
    for i, item in enumerate(items):
        if "/" in item and not item.startswith("/"):
            raise _fail(f"{where}[{i}]", f"must be a program name or an absolute path, got {item!r}")
    return tuple(items)


def _workdir(value: Any, where: str, root: Path) -> tuple[str, Path]:
    if not isinstance(value, str) or not value or "\0" in value:
        raise _fail(where, f"must be a path inside the agent root, got {value!r}")
    real = Path(os.path.realpath(os.path.join(root, value)))
    if not real.is_relative_to(root):
        raise _fail(where, f"must be inside the agent root, got {value!r}")
    return value, real


SECTIONS: dict[str, dict[str, Callable[[Any, str, Path], Any]]] = {
    "filesystem": {
        "read": _roots,
        "write": _roots,
        "max_read_bytes": partial(_integer, 1, 1 << 40),
        "max_write_bytes": partial(_integer, 1, 1 << 40),
    },
    "network": {
        "allow": _bool,
        "allowed_domains": partial(_rules, _domain_rule),
        "allowed_ips": partial(_rules, _ip_rule),
        "block_private_networks": _bool,
        "timeout": partial(_number, 0, 3600),
        "max_response_bytes": partial(_integer, 1, 1 << 40),
        "max_redirects": partial(_integer, 0, 5),
    },
    "shell": {
        "allow": _bool,
        "whitelist": _programs,
        "blacklist": _programs,
        "timeout": partial(_number, 0, 86400),
        "max_output": partial(_integer, 1, 1 << 40),
        "env_clear": _bool,
        "working_dir": _workdir,
        "require_confinement": _bool,
    },
    "limits": {
        "timeout": partial(_number, 0, 7 * 86400),
        "memory_mb": partial(_integer, 1, 65536),
        "fuel": partial(_integer, 1, 1 << 62),
        "max_output_bytes": partial(_integer, 1, 1 << 40),
    },
    "mcp": {
        "allow": _bool,
        "servers": partial(_rules, str),
        "tools": partial(_rules, str),
        "timeout": partial(_number, 0, 86400),
    },
}


def _unknown(where: str, key: object, known: list[str]) -> ManifestError:
    import difflib  # only a manifest with a mistake needs it

    hint = difflib.get_close_matches(str(key), known, n=1)
    guess = f"; did you mean '{hint[0]}'?" if hint else ""
    return _fail(f"{where}.{key}", f"unknown key{guess} (expected one of: {', '.join(known)})")


def _mapping(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _fail(where, f"must be a mapping, got {_type_name(value)}")
    return value


def parse_permissions(value: Any, where: str, root: Path, *, preset: bool = False) -> dict[str, dict[str, Any]]:
    """Validate a ``permissions:`` mapping; return {section: {key: normalized}} for given keys."""
    out: dict[str, dict[str, Any]] = {}
    for section, body in _mapping(value, where).items():
        if section not in SECTIONS:
            raise _unknown(where, section, list(SECTIONS))
        spec = SECTIONS[section]
        here = f"{where}.{section}"
        parsed: dict[str, Any] = {}
        for key, item in _mapping(body, here).items():
            if key not in spec:
                raise _unknown(here, key, list(spec))
            if preset and section == "shell" and key == "working_dir":
                raise _fail(f"{here}.{key}", "a preset cannot set the working directory")
            if item is not None:
                parsed[key] = spec[key](item, f"{here}.{key}", root)
        out[section] = parsed
    return out


def _mode(value: Any, where: str) -> str | None:
    if value is None:
        return None
    if value not in FS_MODES:
        raise _fail(where, f"must be one of {', '.join(FS_MODES)}, got {value!r}")
    return value


# --- tightening by a preset -------------------------------------------------------


def _isect_roots(mine: tuple[FsRoot, ...], theirs: tuple[FsRoot, ...]) -> tuple[FsRoot, ...]:
    out: list[FsRoot] = []
    for a in mine:
        for b in theirs:
            if a.path.is_relative_to(b.path):
                out.append(a)
            elif b.path.is_relative_to(a.path):
                out.append(b)
    return tuple(dict.fromkeys(out))


def _merge_port(a: int | None, b: int | None) -> tuple[bool, int | None]:
    if a is None or b is None or a == b:
        return True, a if a is not None else b
    return False, None


def _pattern_covers(wide: str, narrow: str) -> bool:
    if wide == narrow:
        return True
    return wide.startswith("*.") and narrow.removeprefix("*.").endswith(wide[1:])


def _isect_domains(mine: tuple[DomainRule, ...], theirs: tuple[DomainRule, ...]) -> tuple[DomainRule, ...]:
    from hugind.policy.host_rules import DomainRule

    out: list[DomainRule] = []
    for a in mine:
        for b in theirs:
            ok, port = _merge_port(a.port, b.port)
            if not ok:
                continue
            if _pattern_covers(b.pattern, a.pattern):
                out.append(DomainRule(a.pattern, port, a.spec))
            elif _pattern_covers(a.pattern, b.pattern):
                out.append(DomainRule(b.pattern, port, b.spec))
    return tuple(dict.fromkeys(out))


def _isect_ips(mine: tuple[IpRule, ...], theirs: tuple[IpRule, ...]) -> tuple[IpRule, ...]:
    from hugind.policy.host_rules import IpRule

    out: list[IpRule] = []
    for a in mine:
        for b in theirs:
            ok, port = _merge_port(a.port, b.port)
            if not ok or a.network.version != b.network.version:
                continue
            if a.network.subnet_of(b.network):  # type: ignore[arg-type]
                out.append(IpRule(a.network, port, a.spec))
            elif b.network.subnet_of(a.network):  # type: ignore[arg-type]
                out.append(IpRule(b.network, port, b.spec))
    return tuple(dict.fromkeys(out))


def _isect_programs(mine: tuple[str, ...], theirs: tuple[str, ...], root: Path) -> tuple[str, ...]:
    from hugind.policy.shell import resolve_program

    def key(entry: str) -> str:
        found = resolve_program(entry, root)
        return os.path.realpath(found) if found else entry

    allowed = {key(e) for e in theirs} | set(theirs)
    return tuple(e for e in mine if e in allowed or key(e) in allowed)


def _min(a: Any, b: Any) -> Any:
    if a is None:
        return b
    return a if b is None else min(a, b)


def _cap(mine: dict[str, Any], theirs: dict[str, Any], key: str, default: Any) -> Any:
    """The manifest's value (or the default), lowered to the preset's when that is smaller."""
    return _min(mine.get(key, default), theirs.get(key))


# --- building ----------------------------------------------------------------------

# The defaults, made once: every run builds a policy, and a section the manifest leaves
# out (with no preset or --strict to tighten it) is exactly its default. Frozen, so
# runs may share them.
_FS, _NET, _SHELL, _LIMITS = FsPolicy(), NetPolicy(), ShellPolicy(), Limits()


def _fs(m: dict[str, Any], p: dict[str, Any] | None, mode: str) -> FsPolicy:
    if not m and p is None and mode == _FS.mode:
        return _FS
    read, write = m.get("read", ()), m.get("write", ())
    if p is not None:
        if "write" in p:
            write = _isect_roots(write, p["write"])
        if "read" in p:
            readable = p["read"] + p.get("write", ())
            read, write = _isect_roots(read, readable), _isect_roots(write, readable)
    base = _FS
    return FsPolicy(
        mode=mode,
        read=read,
        write=write,
        max_read_bytes=_cap(m, p or {}, "max_read_bytes", base.max_read_bytes),
        max_write_bytes=_cap(m, p or {}, "max_write_bytes", base.max_write_bytes),
    )


def _net(m: dict[str, Any], p: dict[str, Any] | None, strict: bool) -> NetPolicy:
    if not m and p is None and not strict:
        return _NET
    base = _NET
    domains, ips = m.get("allowed_domains", ()), m.get("allowed_ips", ())
    restrict = strict or bool(domains or ips)
    p = p or {}
    if "allowed_domains" in p or "allowed_ips" in p:
        p_domains, p_ips = p.get("allowed_domains", ()), p.get("allowed_ips", ())
        if restrict:
            domains, ips = _isect_domains(domains, p_domains), _isect_ips(ips, p_ips)
        else:
            domains, ips = p_domains, p_ips
        restrict = True
    return NetPolicy(
        allow=m.get("allow", False) and p.get("allow", True),
        restrict_hosts=restrict,
        allowed_domains=domains,
        allowed_ips=ips,
        block_private_networks=strict
        or m.get("block_private_networks", base.block_private_networks)
        or p.get("block_private_networks", False),
        timeout=_cap(m, p, "timeout", base.timeout),
        max_response_bytes=_cap(m, p, "max_response_bytes", base.max_response_bytes),
        max_redirects=_cap(m, p, "max_redirects", base.max_redirects),
    )


def _shell(m: dict[str, Any], p: dict[str, Any] | None, root: Path, strict: bool) -> ShellPolicy:
    if not m and p is None and not strict:
        return _SHELL
    base = _SHELL
    p = p or {}
    whitelist = m.get("whitelist")
    if "whitelist" in p:
        whitelist = p["whitelist"] if whitelist is None else _isect_programs(whitelist, p["whitelist"], root)
    spec, real = m.get("working_dir", (None, None))
    return ShellPolicy(
        allow=m.get("allow", False) and p.get("allow", True),
        whitelist=whitelist,
        blacklist=tuple(dict.fromkeys(m.get("blacklist", ()) + p.get("blacklist", ()))),
        timeout=_cap(m, p, "timeout", base.timeout),
        max_output=_cap(m, p, "max_output", base.max_output),
        env_clear=m.get("env_clear", base.env_clear) or p.get("env_clear", False),
        working_dir=real,
        working_dir_spec=spec,
        # A manifest cannot opt out under --strict: the operator asked for the kernel's guarantees.
        require_confinement=strict or m.get("require_confinement", False) or p.get("require_confinement", False),
    )


def _limits(m: dict[str, Any], p: dict[str, Any] | None, strict: bool) -> Limits:
    if not m and p is None and not strict:
        return _LIMITS
    base = _LIMITS
    p = p or {}
    fuel = _min(m.get("fuel"), p.get("fuel"))
    if strict and fuel is None:
        fuel = STRICT_DEFAULT_FUEL
    return Limits(
        timeout=_cap(m, p, "timeout", base.timeout),
        memory_mb=_cap(m, p, "memory_mb", base.memory_mb),
        fuel=fuel,
        max_output_bytes=_cap(m, p, "max_output_bytes", base.max_output_bytes),
    )


def build_policy(
    permissions: dict | None,
    *,
    runtime_fs_mode: str | None,
    agent_root: Path,
    strict: bool = False,
    preset: dict | None = None,
) -> Policy:
    """The effective policy; raise ManifestError naming the offending key."""
    root = Path(os.path.realpath(agent_root))
    mine = parse_permissions(permissions, "permissions", root)
    mode = _mode(runtime_fs_mode, "runtime_fs_mode")
    fs_given = mine.get("filesystem", {})
    if mode is None:
        mode = "read-write" if ("read" in fs_given or "write" in fs_given) else "none"
    theirs: dict[str, dict[str, Any]] | None = None
    preset_name = None
    if preset is not None:
        body = _mapping(preset, "preset")
        for key in body:
            if key not in PRESET_KEYS:
                raise _unknown("preset", key, list(PRESET_KEYS))
        preset_name = str(body.get("name") or "preset")
        theirs = parse_permissions(body.get("permissions"), "preset.permissions", root, preset=True)
        cap = _mode(body.get("runtime_fs_mode"), "preset.runtime_fs_mode")
        if cap is not None and FS_MODES.index(cap) < FS_MODES.index(mode):
            mode = cap
    t = theirs or {}
    policy = Policy(
        agent_root=root,
        fs=_fs(fs_given, t.get("filesystem") if theirs is not None else None, mode),
        net=_net(mine.get("network", {}), t.get("network"), strict),
        shell=_shell(mine.get("shell", {}), t.get("shell"), root, strict),
        limits=_limits(mine.get("limits", {}), t.get("limits"), strict),
        strict=strict,
        preset=preset_name,
    )
    return policy


def load_preset(path: str | Path) -> dict:
    """Read a preset YAML file (validated when passed to build_policy)."""
    from hugind.userfile import read_user_file
    from hugind.yamlfile import load_yaml_file

    try:
        text = read_user_file(path, "the preset", error=ManifestError).decode("utf-8")
    except UnicodeDecodeError:
        raise ManifestError("the preset is not valid UTF-8", source=str(path)) from None
    data = load_yaml_file(text, str(path))
    if not isinstance(data, dict):
        raise ManifestError("a preset must be a mapping", source=str(path))
    data.setdefault("name", Path(path).stem)
    return data


__all__ = ["build_policy", "load_preset", "parse_permissions"]
