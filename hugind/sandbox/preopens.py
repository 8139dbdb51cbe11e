"""WASI preopens for raw ``.wasm`` agents, derived from the same policy.

A raw module's own file access (``fopen``...) goes through WASI, which
wasmtime confines to the preopened directories; the host ABI's ``fs.*`` ops
still go through the policy engine. So the preopens must say exactly what the
policy says:

* each readable root directory is preopened read-only, each writable root
  (write roots in ``read-write`` mode, the scratch dir in ``scratch`` mode)
  read-write; ``none`` preopens nothing;
* guest names: the agent root is ``/``, a root inside it ``/<relative path>``,
  the scratch dir ``/scratch``, a root elsewhere its absolute path;
* a root that is a file cannot be preopened alone and is left out (its
  parent would expose siblings);
* a root containing one of the boundary's ``special`` dirs (``/proc``,
  ``/sys``, ``/dev``) or one of hugind's own files, or lying inside one of
  those files, is refused: WASI cannot carve an exception out of a preopen,
  unlike the policy's own checks. (The policy already refuses a root that
  overlaps hugind's files before the run; this is the second line.)

Everything comes from the run's compiled boundary (``engine.fs_view()``);
this module has no paths of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hugind.errors import UsageError


def _guest_name(path: Path, agent_root: Path, scratch: Path | None) -> str:
    if scratch is not None and path == scratch:
        return "/scratch"
    if path.is_relative_to(agent_root):
        rel = path.relative_to(agent_root).as_posix()
        return "/" if rel == "." else f"/{rel}"
    return path.as_posix()


def preopens_for(engine: Any, agent_root: Path) -> list[tuple[Path, str, bool]]:
    """(host dir, guest name, writable) for every directory root of the policy."""
    if engine.policy.fs.mode == "none":
        return []
    view = engine.fs_view()
    writable = {root.path for root in view.writable}
    scratch = view.scratch
    root = agent_root.resolve()
    out: dict[Path, tuple[Path, str, bool]] = {}
    for fs_root in (*view.readable, *view.writable):
        path = fs_root.path
        if not path.is_dir() or path in out:
            continue
        hidden = [d for d in (*view.special, *view.internal) if d.is_relative_to(path)]
        hidden += [d for d in view.internal if path.is_relative_to(d)]
        if hidden:
            raise UsageError(
                f"filesystem root '{fs_root.spec}' contains {hidden[0]}, which a raw .wasm agent would see "
                "through its WASI preopen; list narrower roots"
            )
        out[path] = (path, _guest_name(path, root, scratch), path in writable)
    return sorted(out.values(), key=lambda item: item[1])
