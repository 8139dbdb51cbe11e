"""An agent (folder or single file) as one blob named by its content digest.

The driver packs each agent once; the blob travels through Ray's object
store; a worker unpacks it into a directory named by the digest and reuses
that directory for every later task of the same agent. The worker checks
the digest of the bytes it received before writing anything.

The format is ours and small, so that unpacking can refuse anything
unexpected: ``MAGIC``, one line of JSON listing the entries (relative path,
kind, size or link target, executable bit), then the files' bytes in that
order. Entries are sorted and carry no times or owners, so the same folder
always packs to the same bytes (and the same digest) on any machine.

What is packed: every file of the folder, except ``.git``. A symbolic link
is kept as a link if it points inside the folder; one that points outside
is refused, since the worker would not have its target.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from hugind import jsontext
from hugind.errors import UsageError

MAGIC = b"hugind-agent-pack/1\n"
MAX_PACK_BYTES = 256 * 1024 * 1024
SKIPPED_DIRS = {".git"}


@dataclass(frozen=True)
class Packed:
    digest: str  # sha256:<hex> of ``data``
    entry: str  # the folder's (or file's) name: what the worker loads under its unpack dir
    data: bytes


def digest_of(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def _entries(root: Path) -> list[dict[str, Any]]:
    """Every entry under ``root`` (a folder), as relative POSIX paths, sorted."""
    found: list[dict[str, Any]] = []
    real_root = root.resolve()
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        base = Path(here)
        for name in [*dirs, *sorted(files)]:
            path = base / name
            rel = path.relative_to(root).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(path)
                resolved = (path.parent / target).resolve()
                if os.path.isabs(target) or not resolved.is_relative_to(real_root):
                    raise UsageError(f"{root}: the link {rel} leaves the agent folder (Ray ships only the folder)")
                found.append({"path": rel, "kind": "link", "target": target})
            elif stat.S_ISDIR(info.st_mode):
                found.append({"path": rel, "kind": "dir"})
            elif stat.S_ISREG(info.st_mode):
                found.append({"path": rel, "kind": "file", "size": info.st_size, "x": bool(info.st_mode & 0o100)})
    found.sort(key=lambda e: e["path"])
    return found


def pack(agent_path: Path) -> Packed:
    """Pack an agent folder (or a single .js / .wasm file); raises UsageError naming the cause."""
    path = agent_path.resolve()
    folder = path.is_dir()
    if folder:
        entries = _entries(path)
        files = [path / e["path"] for e in entries if e["kind"] == "file"]
    elif path.is_file():
        size = path.stat().st_size
        entries = [{"path": path.name, "kind": "file", "size": size, "x": False}]
        files = [path]
        path = path.parent
    else:
        raise UsageError(f"{agent_path}: no such agent folder or file")
    total = sum(e.get("size", 0) for e in entries)
    if total > MAX_PACK_BYTES:
        raise UsageError(f"{agent_path}: the agent is {total} bytes, over the {MAX_PACK_BYTES} bytes Ray may ship")
    name = agent_path.resolve().name
    head = {"entry": name, "folder": folder, "entries": entries}
    parts = [MAGIC, json.dumps(head, separators=(",", ":"), sort_keys=True).encode(), b"\n"]
    try:
        for file in files:
            parts.append(file.read_bytes())
    except OSError as exc:
        raise UsageError(f"{agent_path}: cannot read {exc.filename}: {exc.strerror}") from None
    data = b"".join(parts)
    return Packed(digest_of(data), name, data)


def _safe_relative(text: Any) -> PurePosixPath:
    if not isinstance(text, str) or not text or "\\" in text or "\0" in text:
        raise ValueError(f"bad entry path {text!r}")
    rel = PurePosixPath(text)
    if rel.is_absolute() or any(p in ("", ".", "..") for p in rel.parts):
        raise ValueError(f"bad entry path {text!r}")
    return rel


def _head(data: bytes) -> tuple[dict[str, Any], int]:
    if not data.startswith(MAGIC):
        raise ValueError("not a hugind agent pack")
    head_end = data.index(b"\n", len(MAGIC))
    head = jsontext.loads(data[len(MAGIC) : head_end])
    if not isinstance(head, dict) or not isinstance(head.get("entries"), list):
        raise ValueError("malformed header")
    _safe_relative(head.get("entry"))
    return head, head_end + 1


def _write_entries(entries: list[Any], data: bytes, pos: int, dest: Path) -> None:
    for entry in entries:
        rel = _safe_relative(entry.get("path"))
        target = dest.joinpath(*rel.parts)
        kind = entry.get("kind")
        if kind == "dir":
            target.mkdir(parents=True, exist_ok=True)
        elif kind == "file":
            size = int(entry["size"])
            if size < 0 or pos + size > len(data):
                raise ValueError(f"entry {rel} runs past the end of the pack")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data[pos : pos + size])
            target.chmod(0o700 if entry.get("x") else 0o600)
            pos += size
        elif kind == "link":
            link = entry.get("target")
            if not isinstance(link, str) or os.path.isabs(link):
                raise ValueError(f"bad link target for {rel}")
            landing = os.path.normpath(os.path.join(os.path.dirname(rel.as_posix()), link))
            if landing == ".." or landing.startswith("../"):
                raise ValueError(f"the link {rel} points outside the agent")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(link)
        else:
            raise ValueError(f"unknown entry kind {kind!r}")
    if pos != len(data):
        raise ValueError("trailing bytes after the last entry")


def agents_dir() -> Path:
    """Where a worker keeps unpacked agents: readable by the agents themselves, so
    not under hugind's cache (which the policy hides from every agent)."""
    override = os.environ.get("HUGIND_RAY_AGENTS_DIR")
    base = Path(override) if override else Path(tempfile.gettempdir()) / f"hugind-ray-agents-{os.getuid()}"
    base.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = base.lstat()
    if stat.S_ISLNK(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise UsageError(f"{base} must be a directory owned by this user and private to it (mode 700)")
    return base


def unpacked_path(digest: str) -> Path:
    return agents_dir() / digest.removeprefix("sha256:")


def unpack(digest: str, data: bytes) -> Path:
    """The agent's path on this machine, unpacking ``data`` if this digest is not here yet."""
    if digest_of(data) != digest:
        raise UsageError(f"the agent received does not match its digest {digest}: refusing to run it")
    dest = unpacked_path(digest)
    try:
        head, pos = _head(data)
        name = head["entry"]
        if not dest.is_dir():
            staging = Path(tempfile.mkdtemp(prefix=".unpack-", dir=dest.parent))
            try:
                root = staging / name if head.get("folder") else staging
                root.mkdir(exist_ok=True)
                _write_entries(head["entries"], data, pos, root)
                try:
                    staging.rename(dest)
                except OSError:  # another worker of this node unpacked the same digest first
                    if not dest.is_dir():
                        raise
            finally:
                shutil.rmtree(staging, ignore_errors=True)
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"the agent {digest} is not a valid pack: {exc}") from None
    return dest / name
