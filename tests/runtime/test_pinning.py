"""``hugind.pinning`` called in-process on real agents (the CLI side is in
test_artifact_integrity.py): what each kind of agent is sealed to, and the order of
the checks of ``--expect``. In-process so a mutation tester sees which test covers it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import wasmtime

from hugind.digest import parse_expected, wasm_digest
from hugind.errors import DigestMismatch, UsageError
from hugind.jscheck import JsCompileError
from hugind.manifest import load_agent
from hugind.pinning import digest_for_check, pin, verify
from hugind.sandbox.raw_wasm import PINNED_WASM
from tests.conftest import run_cli, write_agent

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
MANIFEST = "name: pinned\nentry_point: main.js\n"
MAIN = 'import {shout} from "./lib/shout.js";\nexport default (input) => shout("x");\n'
LIB = "export const shout = (s) => s.toUpperCase();\n"
WAT = '(module (memory (export "memory") 1) (func (export "_start")))'


def _js(root: Path, lib: str = LIB) -> Path:
    return write_agent(root, {"main.js": MAIN, "lib/shout.js": lib, "agent.yaml": MANIFEST})


def test_a_js_agent_is_sealed_to_the_digest_of_its_graph(tmp_path):
    agent = load_agent(_js(tmp_path / "a"))
    pinned = pin(agent)
    assert DIGEST.fullmatch(pinned.digest)
    assert pinned.agent is not agent and pinned.agent.extra["pinned_digest"] == pinned.digest
    art = pinned.agent.extra["artifact"]  # runs the bytecode of exactly the hashed graph
    assert sorted(art.modules) == ["lib/shout.js", "main.js"] and art.entry == "main.js"
    again = pin(pinned.agent)  # sealed: pinning it again reads nothing and says the same
    assert again.digest == pinned.digest and again.agent is pinned.agent
    assert "artifact" not in agent.extra  # the loaded agent is left as it was
    other = pin(load_agent(_js(tmp_path / "b", lib=LIB.replace("Upper", "Lower"))))
    assert other.digest != pinned.digest


def test_a_wasm_agent_is_sealed_to_the_bytes_that_were_hashed(tmp_path):
    module = tmp_path / "solo.wasm"
    data = wasmtime.wat2wasm(WAT)
    module.write_bytes(data)
    agent = load_agent(module)
    pinned = pin(agent)
    assert pinned.digest == wasm_digest(None, data)
    assert pinned.agent.extra[PINNED_WASM] == data and pinned.agent.extra["pinned_digest"] == pinned.digest
    module.write_bytes(wasmtime.wat2wasm(WAT.replace("1)", "2)")))  # swapped after the check
    assert pin(pinned.agent).digest == pinned.digest  # the sealed bytes, not the file's
    assert pin(agent).digest != pinned.digest


def test_an_artifact_keeps_its_embedded_digest(tmp_path):
    out = tmp_path / "a.wasm"
    res = run_cli("build", str(_js(tmp_path / "src")), "-o", str(out))
    assert res.code == 0, res.stderr
    agent = load_agent(out)
    pinned = pin(agent)
    assert pinned.digest == res.stdout.strip() and pinned.agent is agent


def test_verify_returns_the_sealed_agent_or_refuses_naming_both_digests(tmp_path):
    agent = load_agent(_js(tmp_path / "a"))
    digest = pin(agent).digest
    sealed = verify(agent, digest.upper().replace("SHA256:", "sha256:"), "the-source")
    assert sealed.extra["pinned_digest"] == digest
    built = pin(agent).agent.extra["artifact"].digest  # a JS agent also answers to its build's digest
    assert verify(agent, built, "the-source").extra["pinned_digest"] == digest
    wrong = "sha256:" + "0" * 64
    with pytest.raises(DigestMismatch) as err:
        verify(agent, wrong, "the-source")
    assert str(err.value) == (
        f"the-source: digest {digest} (its build's: {built}) does not match --expect {wrong}; "
        "the agent is not the one that was pinned, so nothing was run"
    )


def test_a_malformed_pin_fails_before_any_compile(tmp_path):
    broken = load_agent(write_agent(tmp_path / "b", {"main.js": "export default (", "agent.yaml": MANIFEST}))
    with pytest.raises(UsageError) as err:
        verify(broken, "sha256:1234", "src")
    assert not isinstance(err.value, JsCompileError) and "--expect must be sha256:" in str(err.value)


def test_digest_for_check_is_the_compile_check(tmp_path):
    agent = load_agent(_js(tmp_path / "a"))
    digest = pin(agent).digest
    assert digest_for_check(agent, None, "src") == digest
    assert digest_for_check(agent, digest, "src") == parse_expected(digest)
    with pytest.raises(DigestMismatch) as err:
        digest_for_check(agent, "sha256:" + "f" * 64, "src")
    assert str(err.value).startswith(f"src: digest {digest} (its build's: sha256:")
    broken = load_agent(write_agent(tmp_path / "b", {"main.js": "export default (", "agent.yaml": MANIFEST}))
    with pytest.raises(JsCompileError) as err:
        digest_for_check(broken, None, "src")
    assert "main.js" in str(err.value) and err.value.js_name
    with pytest.raises(JsCompileError):
        digest_for_check(broken, "sha256:" + "f" * 64, "src")
