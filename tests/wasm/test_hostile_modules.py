"""Hostile raw modules (tiny WAT guests): instantiation is under the run's limits,
and a guest's own faults end the run with the documented code, never exit 70.

Each runs the real CLI; the subprocess timeout is only a safety net against a hang.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import wasmtime

from hugind.errors import ExitCode
from tests.conftest import run_cli

SAFETY_TIMEOUT = 120


def _agent(tmp_path: Path, wat: str, **limits: object) -> Path:
    root = tmp_path / "agent"
    root.mkdir()
    (root / "agent.wasm").write_bytes(wasmtime.wat2wasm(wat))
    (root / "agent.yaml").write_text(
        "name: hostile\nentry_point: agent.wasm\n"
        + (f"permissions:\n  limits: {{{', '.join(f'{k}: {v}' for k, v in limits.items())}}}\n" if limits else "")
    )
    return root


def _wat_string(data: bytes) -> str:
    return "".join(chr(b) if b < 128 and chr(b).isalnum() else f"\\{b:02x}" for b in data)


START_LOOP = """(module (memory (export "memory") 1)
  (func $spin (loop $l (br $l))) (start $spin)
  (func (export "_start")))"""


def test_a_start_function_that_never_returns_hits_the_deadline(tmp_path):
    out = run_cli("run", str(_agent(tmp_path, START_LOOP, timeout=1)), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.LIMIT_EXCEEDED, out
    assert "while instantiating the module" in out.stderr and "wall-clock deadline exceeded" in out.stderr
    assert "Traceback" not in out.stderr


def test_a_start_function_that_never_returns_runs_out_of_fuel(tmp_path):
    out = run_cli("run", str(_agent(tmp_path, START_LOOP)), "--fuel", "100000", timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.LIMIT_EXCEEDED, out
    assert "while instantiating the module" in out.stderr and "fuel exhausted (100000 units" in out.stderr


def test_a_data_segment_out_of_bounds_is_a_trap(tmp_path):
    wat = """(module (memory (export "memory") 1) (data (i32.const 65534) "abcd") (func (export "_start")))"""
    out = run_cli("run", str(_agent(tmp_path, wat)), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.TRAP, out
    assert "while instantiating the module" in out.stderr and "out-of-bounds memory access" in out.stderr


def test_a_trap_in_the_start_function_is_a_trap(tmp_path):
    wat = """(module (memory (export "memory") 1) (func $s unreachable) (start $s) (func (export "_start")))"""
    out = run_cli("run", str(_agent(tmp_path, wat)), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.TRAP, out
    assert "unreachable instruction executed" in out.stderr


def test_proc_exit_in_the_start_function_is_the_agent_failing(tmp_path):
    wat = """(module (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
      (memory (export "memory") 1) (func $s (call $exit (i32.const 3))) (start $s) (func (export "_start")))"""
    out = run_cli("run", str(_agent(tmp_path, wat)), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.AGENT_FAILED, out
    assert "proc_exit(3) while being instantiated" in out.stderr


def test_a_start_function_may_call_the_host(tmp_path):
    request = b'{"op":"fs.cwd"}'
    wat = f"""(module
      (import "hugind" "call" (func $call (param i32 i32) (result i32)))
      (import "hugind" "take" (func $take (param i32 i32) (result i32)))
      (memory (export "memory") 1) (data (i32.const 16) "{_wat_string(request)}")
      (global $n (mut i32) (i32.const 0))
      (func $s (global.set $n (call $call (i32.const 16) (i32.const {len(request)})))
               (drop (call $take (i32.const 1024) (global.get $n))))
      (start $s)
      (func (export "_start") (if (i32.le_s (global.get $n) (i32.const 0)) (then unreachable))))"""
    out = run_cli("run", str(_agent(tmp_path, wat)), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.OK, out


def test_an_alloc_pointer_outside_memory_is_the_guests_fault(tmp_path):
    wat = """(module (memory (export "memory") 1)
      (func (export "hugind_alloc") (param i32) (result i32) (i32.const 0x7fff0000))
      (func (export "hugind_main") (param i32 i32) (result i32) (i32.const 0)))"""
    out = run_cli("run", str(_agent(tmp_path, wat)), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.TRAP, out
    assert "hugind_alloc" in out.stderr and "0x7fff0000, outside its 65536-byte memory" in out.stderr
    assert "Traceback" not in out.stderr


# ---- hostile requests: the reply is echoed back as the agent's result -----------------------


def _echo_guest(request: bytes) -> str:
    """A guest that sends ``request`` and returns the host's reply as its result."""
    head = b'{"op":"agent.done","args":{"has_value":true,"value":'
    req_at = 4096
    heap = (req_at + len(request) + 0xFFFF) // 0x10000 * 0x10000
    pages = heap // 0x10000 + 2
    return f"""(module
      (import "hugind" "call" (func $call (param i32 i32) (result i32)))
      (import "hugind" "take" (func $take (param i32 i32) (result i32)))
      (memory (export "memory") {pages})
      (data (i32.const 64) "{_wat_string(head)}")
      (data (i32.const {req_at}) "{_wat_string(request)}")
      (func (export "hugind_alloc") (param i32) (result i32) (i32.const {heap}))
      (func (export "hugind_main") (param i32 i32) (result i32) (local $n i32) (local $end i32)
        (local.set $n (call $call (i32.const {req_at}) (i32.const {len(request)})))
        (drop (call $take (i32.const {64 + len(head)}) (local.get $n)))
        (local.set $end (i32.add (i32.const {64 + len(head)}) (local.get $n)))
        (i32.store16 (local.get $end) (i32.const 0x7d7d))  ;; "}}": close args and the request
        (local.set $n (call $call (i32.const 64) (i32.add (local.get $n) (i32.const {len(head) + 2}))))
        (drop (call $take (i32.const {heap}) (local.get $n)))
        (i32.const 0)))"""


def _echo(tmp_path: Path, request: bytes) -> dict:
    import json

    out = run_cli("run", str(_agent(tmp_path, _echo_guest(request))), timeout=SAFETY_TIMEOUT)
    assert out.code == ExitCode.OK, out
    assert "Traceback" not in out.stderr
    return json.loads(out.stdout)


@pytest.mark.parametrize("depth", [2_000, 1_000_000])
def test_a_request_nested_a_million_deep_is_refused(tmp_path, depth):
    request = b'{"op":"fs.exists","args":{"path":' + b"[" * depth + b"]" * depth + b"}}"
    reply = _echo(tmp_path, request)
    assert reply["error"]["kind"] == "InvalidArgument"
    assert "nested too deeply" in reply["error"]["message"]


@pytest.mark.parametrize(
    "lone", [b"\\ud800", b"\\uDFFF", "\ud800".encode("utf-8", "surrogatepass")], ids=["escape", "upper", "raw"]
)
def test_a_lone_surrogate_in_a_request_is_refused_naming_the_argument(tmp_path, lone):
    reply = _echo(tmp_path, b'{"op":"fs.exists","args":{"path":"a' + lone + b'"}}')
    assert reply["error"] == {
        "kind": "InvalidArgument",
        "message": "argument 'path' of 'fs.exists' is not valid Unicode (it holds a lone UTF-16 surrogate)",
    }
