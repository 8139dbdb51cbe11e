"""Raw ``.wasm`` agents: checked before compiling, linked against exactly
the imports the host grants (WASI preview 1 + the ``hugind`` ABI)."""

from __future__ import annotations

from pathlib import Path

import wasmtime

from hugind.errors import InvalidModule
from hugind.sandbox.engine import EngineConfig, load_module

MAX_MODULE_BYTES = 64 * 1024 * 1024
WASI_MODULE = "wasi_snapshot_preview1"
# The hugind imports and their parameter counts (all i32, one i32 result; ABI.md).
HUGIND_IMPORTS = {"call": 2, "take": 2, "submit": 2, "call_into": 4}
PINNED_WASM = "wasm"  # Agent.extra key: module bytes verified against --expect, run instead of re-reading the file


def _describe(ty: object) -> str:
    return {
        wasmtime.FuncType: "function",
        wasmtime.MemoryType: "memory",
        wasmtime.TableType: "table",
        wasmtime.GlobalType: "global",
    }.get(type(ty), "item")


def check_imports(module: wasmtime.Module) -> None:
    """Refuse, by name, any import the host would not provide, or would provide
    with another signature."""
    for imp in module.imports:
        name = imp.name or ""
        granted = (imp.module == "hugind" and name in HUGIND_IMPORTS) or (
            imp.module == WASI_MODULE and name in WASI_FUNCTIONS
        )
        if not granted or not isinstance(imp.type, wasmtime.FuncType):
            raise InvalidModule(
                f"the module imports {_describe(imp.type)} '{imp.module}.{name}', which hugind does not grant "
                f"(granted: hugind.{{call,call_into,take,submit}} and WASI preview 1 functions)"
            )
        if imp.module == "hugind":
            params = [str(p) for p in imp.type.params]
            results = [str(r) for r in imp.type.results]
            want = ["i32"] * HUGIND_IMPORTS[name]
            if (params, results) != (want, ["i32"]):
                raise InvalidModule(
                    f"the module imports 'hugind.{name}' as ({', '.join(params)}) -> ({', '.join(results)}); "
                    f"ABI v1 defines it as ({', '.join(want)}) -> (i32)"
                )


# The WASI preview 1 functions. An unknown WASI import would fail at link time
# anyway; checking against this list first lets the error name the import.
WASI_FUNCTIONS = frozenset(
    [
        "args_get",
        "args_sizes_get",
        "environ_get",
        "environ_sizes_get",
        "clock_res_get",
        "clock_time_get",
        "fd_advise",
        "fd_allocate",
        "fd_close",
        "fd_datasync",
        "fd_fdstat_get",
        "fd_fdstat_set_flags",
        "fd_fdstat_set_rights",
        "fd_filestat_get",
        "fd_filestat_set_size",
        "fd_filestat_set_times",
        "fd_pread",
        "fd_prestat_get",
        "fd_prestat_dir_name",
        "fd_pwrite",
        "fd_read",
        "fd_readdir",
        "fd_renumber",
        "fd_seek",
        "fd_sync",
        "fd_tell",
        "fd_write",
        "path_create_directory",
        "path_filestat_get",
        "path_filestat_set_times",
        "path_link",
        "path_open",
        "path_readlink",
        "path_remove_directory",
        "path_rename",
        "path_symlink",
        "path_unlink_file",
        "poll_oneoff",
        "proc_exit",
        "proc_raise",
        "sched_yield",
        "random_get",
        "sock_accept",
        "sock_recv",
        "sock_send",
        "sock_shutdown",
    ]
)


def read_agent_module(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_MODULE_BYTES:
        raise InvalidModule(f"{path.name} is {size} bytes; agent modules are capped at {MAX_MODULE_BYTES} bytes")
    return path.read_bytes()


def load_agent_module(path: Path, config: EngineConfig, data: bytes | None = None) -> wasmtime.Module:
    """Compile the agent's module; ``data``: bytes already read (and pinned) by the caller, run as they are."""
    if data is None:
        data = read_agent_module(path)
    if data[:4] != b"\0asm":
        raise InvalidModule(f"{path.name} is not a WebAssembly binary (bad magic number)")
    try:
        module = load_module(data, config)
    except wasmtime.WasmtimeError as exc:
        text = str(exc).strip().splitlines()
        raise InvalidModule(f"{path.name} is not a valid module: {text[0] if text else exc}") from None
    check_imports(module)
    return module
