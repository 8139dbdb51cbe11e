"""A stdio transport for the MCP SDK client that hugind controls end to end.

Why not the SDK's ``stdio_client``: it always merges an allow-list of the
host environment (HOME, PATH, USER, SHELL, ...) into the child's, and sends
the child's stderr to a file. Here the child gets exactly the environment it
is given, its stderr is read into a bounded tail (quoted when the server
fails), and shutdown kills the server's whole process group, so nothing it
started outlives the run.

Shutdown: close the server's stdin (the spec's polite request), wait a
moment, SIGTERM the group, then SIGKILL whatever is left, including children
the server left behind after it exited itself.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import anyio
import anyio.abc
import mcp_types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage

from hugind.mcp.process import ProcessInfo, StderrTail

EXIT_GRACE = 1.0  # seconds a server has to exit once its stdin is closed
TERM_GRACE = 0.5  # seconds between SIGTERM and SIGKILL of the group
MAX_LINE = 64 * 1024 * 1024  # a JSON-RPC message longer than this ends the connection


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def _wait_exit(process: anyio.abc.Process, timeout: float) -> bool:
    # Poll the return code: process.wait() also waits for the pipes to close,
    # which a grandchild holding them would delay.
    with anyio.move_on_after(timeout):
        while process.returncode is None:
            await anyio.sleep(0.01)
    return process.returncode is not None


async def _stop(process: anyio.abc.Process) -> None:
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            await process.stdin.aclose()
    if not await _wait_exit(process, EXIT_GRACE):
        _signal_group(process.pid, signal.SIGTERM)
        if not await _wait_exit(process, TERM_GRACE):
            _signal_group(process.pid, signal.SIGKILL)
            await _wait_exit(process, TERM_GRACE)
    # Whatever the server started in its group dies with it.
    _signal_group(process.pid, signal.SIGKILL)


@contextlib.asynccontextmanager
async def stdio_transport(
    command: str,
    args: Sequence[str],
    env: Mapping[str, str],
    cwd: Path,
    tail: StderrTail,
    info: ProcessInfo | None = None,
) -> AsyncIterator[tuple[MemoryObjectReceiveStream, MemoryObjectSendStream]]:
    """Start ``command`` and yield the (read, write) message streams the SDK's session uses.

    Raises OSError when the command cannot be started.
    """
    process = await anyio.open_process(
        [command, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=str(cwd),
        env=dict(env),
        start_new_session=True,
    )
    if info is not None:
        info.pid, info.process = process.pid, process
    incoming_send, incoming = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    outgoing, outgoing_receive = anyio.create_memory_object_stream[SessionMessage](16)

    async def read_stdout() -> None:
        assert process.stdout is not None
        buffer = b""
        async with incoming_send:
            try:
                async for chunk in process.stdout:
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        if line.strip():
                            await incoming_send.send(_parse(line, tail))
                    if len(buffer) > MAX_LINE:
                        tail.add(b"\n[hugind] the server sent a message line over the size limit\n")
                        return
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream, OSError):
                return

    async def read_stderr() -> None:
        assert process.stderr is not None
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            async for chunk in process.stderr:
                tail.add(chunk)

    async def write_stdin() -> None:
        assert process.stdin is not None
        async with outgoing_receive:
            try:
                async for message in outgoing_receive:
                    frame = message.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(frame.encode())
            except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                await incoming_send.aclose()  # the session sees the connection end

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read_stdout)
            tg.start_soon(read_stderr)
            tg.start_soon(write_stdin)
            try:
                yield incoming, outgoing
            finally:
                with anyio.CancelScope(shield=True):
                    await outgoing.aclose()
                    await incoming.aclose()
                    await _stop(process)
                tg.cancel_scope.cancel()
    finally:
        with anyio.move_on_after(TERM_GRACE, shield=True), contextlib.suppress(Exception):
            await process.aclose()


def _parse(line: bytes, tail: StderrTail) -> SessionMessage | Exception:
    try:
        return SessionMessage(mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        # Not a JSON-RPC message: keep it for diagnostics; the session reports the exception.
        tail.add(b"[hugind] non-protocol output on stdout: " + line[:200] + b"\n")
        return exc
