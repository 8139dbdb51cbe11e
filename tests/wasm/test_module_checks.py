"""Raw modules the host refuses before running them, with a message naming the cause."""

from __future__ import annotations

import os

import pytest
import wasmtime
import yaml

from hugind.errors import ExitCode, InvalidModule, LimitExceeded
from hugind.sandbox.raw_wasm import MAX_MODULE_BYTES
from tests.runtime.helpers import run_captured


def _agent_with(tmp_path, data: bytes | None = None, size: int | None = None):
    root = tmp_path / "agent"
    root.mkdir()
    module = root / "agent.wasm"
    if data is not None:
        module.write_bytes(data)
    if size is not None:
        with open(module, "wb") as f:  # sparse: costs no disk
            f.truncate(size)
    (root / "agent.yaml").write_text(yaml.safe_dump({"name": "bad", "entry_point": "agent.wasm"}))
    return root


def test_ungranted_import_is_refused_before_anything_runs(guest_agent):
    agent = guest_agent("forbidden")
    with pytest.raises(InvalidModule) as err:
        run_captured(agent)
    assert "imports function 'env.forbidden', which hugind does not grant" in err.value.message
    assert err.value.exit_code == ExitCode.USAGE == 2


def test_ungranted_import_cli_exit_code_and_no_output(guest_agent, cli):
    run = cli("run", str(guest_agent("forbidden")))
    assert run.code == 2
    assert "hugind: error: the module imports function 'env.forbidden'" in run.stderr
    # the guest's constructor prints "constructor ran" if the module is ever started
    assert run.stdout == ""
    assert "constructor ran" not in run.stderr


def test_non_wasm_file_is_refused(tmp_path, cli):
    agent = _agent_with(tmp_path, b"#!/bin/sh\necho not wasm\n")
    with pytest.raises(InvalidModule) as err:
        run_captured(agent)
    assert err.value.message == "agent.wasm is not a WebAssembly binary (bad magic number)"
    run = cli("run", str(agent))
    assert (run.code, run.stderr.strip()) == (2, f"hugind: error: {err.value.message}")


def test_corrupt_module_is_refused(tmp_path):
    agent = _agent_with(tmp_path, b"\0asm\x01\0\0\0\x01\xff\xff\xff\xff garbage")
    with pytest.raises(InvalidModule) as err:
        run_captured(agent)
    assert err.value.message.startswith("agent.wasm is not a valid module: ")
    assert err.value.exit_code == 2


def test_oversized_module_is_refused_without_reading_it(tmp_path):
    agent = _agent_with(tmp_path, size=MAX_MODULE_BYTES + 1)
    with pytest.raises(InvalidModule) as err:
        run_captured(agent)
    assert err.value.message == (
        f"agent.wasm is {MAX_MODULE_BYTES + 1} bytes; agent modules are capped at {MAX_MODULE_BYTES} bytes"
    )
    assert err.value.exit_code == 2


def test_module_without_entry_point_is_refused(tmp_path):
    # (module (memory (export "memory") 1))
    agent = _agent_with(tmp_path, bytes.fromhex("0061736d010000000503010001070a01066d656d6f72790200"))
    with pytest.raises(InvalidModule) as err:
        run_captured(agent)
    assert "exports neither 'hugind_main' nor '_start'" in err.value.message


def test_module_needing_more_memory_than_the_cap_is_refused(guest_agent):
    # 64 MiB of zeroed static data against a 32 MiB cap: refused before instantiation.
    agent = guest_agent("big_static", permissions={"limits": {"memory_mb": 32}})
    with pytest.raises(LimitExceeded) as err:
        run_captured(agent)
    assert "MiB of memory at start, over the cap of 32.0 MiB" in err.value.message
    assert "permissions.limits.memory_mb" in err.value.message
    assert err.value.exit_code == ExitCode.LIMIT_EXCEEDED
    assert os.path.getsize(agent / "agent.wasm") < 1 << 20  # zeroed data costs no file bytes


def test_granted_import_with_the_wrong_signature_is_an_invalid_module(tmp_path):
    wasm = wasmtime.wat2wasm(
        """(module
             (import "hugind" "call" (func (param i64) (result i32)))
             (memory (export "memory") 1)
             (func (export "hugind_main") (param i32 i32) (result i32) i32.const 0))"""
    )
    with pytest.raises(InvalidModule) as err:
        run_captured(_agent_with(tmp_path, wasm))
    assert "hugind.call" in err.value.message
