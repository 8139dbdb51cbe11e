"""Artifacts cannot be edited undetected, and --expect pins what runs (issue #16, part 1b).

Every tampering test goes through the real CLI and checks three things: exit
code 2, a message naming the artifact and the cause, and no sign that the
agent ran (it prints a marker when its module is evaluated).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import wasmtime

from hugind import artifact
from hugind.errors import InvalidModule
from tests.conftest import write_agent

MARKER = "AGENT-CODE-RAN"
DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
AGENT_YAML = """\
name: reader
entry_point: main.js
permissions:
  filesystem:
    read: [data]
"""
MAIN = f"""
import {{shout}} from "./lib/shout.js";
print("{MARKER}");
export default (input) => shout(input.args[0] || "none");
"""
LIB = "export const shout = (s) => s.toUpperCase();"


def _leb(n: int) -> bytes:
    out = bytearray()
    while True:
        byte, n = n & 0x7F, n >> 7
        out.append(byte | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _read_leb(data: bytes, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def split_sections(data: bytes) -> list[tuple[str, bytes]]:
    """An independent reader of custom sections, so the tests do not trust the code under test."""
    pos, out = 8, []
    while pos < len(data):
        size, body = _read_leb(data, pos + 1)
        name_len, name_pos = _read_leb(data, body)
        out.append((data[name_pos : name_pos + name_len].decode(), data[name_pos + name_len : body + size]))
        pos = body + size
    return out


def section(name: str, payload: bytes) -> bytes:
    raw = name.encode()
    content = _leb(len(raw)) + raw + payload
    return b"\0" + _leb(len(content)) + content


def assemble(sections: list[tuple[str, bytes]]) -> bytes:
    return b"\0asm\x01\0\0\0" + b"".join(section(n, p) for n, p in sections)


def _agent(root: Path, main: str = MAIN, lib: str = LIB, manifest: str = AGENT_YAML) -> Path:
    return write_agent(root, {"main.js": main, "lib/shout.js": lib, "agent.yaml": manifest, "data/x.txt": "x"})


def _build(cli, agent: Path, out: Path) -> str:
    res = cli("build", str(agent), "-o", str(out))
    assert res.code == 0, res.stderr
    assert DIGEST.fullmatch(res.stdout.strip()), res.stdout
    return res.stdout.strip()


def _assert_refused(cli, path: Path, *needles: str) -> None:
    res = cli("run", str(path), "--", "hi")
    assert res.code == 2, (res.code, res.stdout, res.stderr)
    assert res.stdout == ""
    assert MARKER not in res.stderr
    assert "Traceback" not in res.stderr
    assert str(path) in res.stderr and "not a valid hugind artifact" in res.stderr
    for needle in needles:
        assert needle in res.stderr, res.stderr
    # check must refuse it too: what it would show is not what was built
    assert cli("check", str(path)).code == 2


def test_untampered_artifact_runs(cli, tmp_path):
    out = tmp_path / "a.wasm"
    _build(cli, _agent(tmp_path / "src"), out)
    res = cli("run", str(out), "--", "hi")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout.splitlines()[-1]) == "HI" and MARKER in res.stdout


def test_same_length_manifest_edit_is_refused(cli, tmp_path):
    out = tmp_path / "a.wasm"
    _build(cli, _agent(tmp_path / "src"), out)
    data = out.read_bytes()
    assert data.count(b"read: [data]") == 1
    out.write_bytes(data.replace(b"read: [data]", b"read: [////]"))  # offsets unchanged: the whole disk readable
    _assert_refused(cli, out, "integrity check failed")


def test_flipped_bytecode_byte_is_refused(cli, tmp_path):
    out = tmp_path / "a.wasm"
    _build(cli, _agent(tmp_path / "src"), out)
    data = bytearray(out.read_bytes())
    payload = dict(split_sections(bytes(data)))["hugind.bc/main.js"]
    at = bytes(data).index(payload) + len(payload) // 2
    data[at] ^= 0x01
    out.write_bytes(bytes(data))
    _assert_refused(cli, out, "integrity check failed")


def test_code_swapped_in_from_another_artifact_is_refused(cli, tmp_path):
    good, evil = tmp_path / "good.wasm", tmp_path / "evil.wasm"
    _build(cli, _agent(tmp_path / "good"), good)
    _build(cli, _agent(tmp_path / "evil", main=MAIN.replace("shout(", "'owned' + shout(")), evil)
    evil_code = dict(split_sections(evil.read_bytes()))["hugind.bc/main.js"]
    swapped = [(n, evil_code if n == "hugind.bc/main.js" else p) for n, p in split_sections(good.read_bytes())]
    good.write_bytes(assemble(swapped))
    _assert_refused(cli, good, "integrity check failed")


def test_truncated_sections_are_refused(cli, tmp_path):
    out = tmp_path / "a.wasm"
    _build(cli, _agent(tmp_path / "src"), out)
    data = out.read_bytes()
    for cut in (len(data) - 5, 40):  # inside the last bytecode section; inside the metadata
        out.write_bytes(data[:cut])
        _assert_refused(cli, out, "truncated")


def test_appended_duplicate_metadata_section_is_refused(cli, tmp_path):
    """Before: the later duplicate won, so a valid second header (any manifest) overrode the first."""
    good, wide = tmp_path / "good.wasm", tmp_path / "wide.wasm"
    _build(cli, _agent(tmp_path / "good"), good)
    _build(cli, _agent(tmp_path / "wide", manifest=AGENT_YAML.replace("[data]", "[/]")), wide)
    wide_meta = dict(split_sections(wide.read_bytes()))[artifact.META_SECTION]
    good.write_bytes(good.read_bytes() + section(artifact.META_SECTION, wide_meta))
    _assert_refused(cli, good, "'hugind.artifact' appears twice")


def test_removed_digest_unknown_sections_and_trailing_bytes_are_refused(cli, tmp_path):
    out = tmp_path / "a.wasm"
    _build(cli, _agent(tmp_path / "src"), out)
    sections = split_sections(out.read_bytes())
    meta = json.loads(sections[0][1])
    del meta["sha256"]
    variants = {
        "carries no integrity digest": assemble([(sections[0][0], json.dumps(meta).encode()), *sections[1:]]),
        "unexpected section 'hugind.extra'": assemble([*sections, ("hugind.extra", b"x")]),
        "unexpected section 'hugind.bc/late.js'": assemble([*sections, ("hugind.bc/late.js", b"x")]),
        "trailing bytes": out.read_bytes() + b"\x01\x00",
    }
    for needle, data in variants.items():
        out.write_bytes(data)
        _assert_refused(cli, out, needle)


def test_format_1_artifact_asks_for_a_rebuild(cli, tmp_path):
    out = tmp_path / "a.wasm"
    _build(cli, _agent(tmp_path / "src"), out)
    sections = split_sections(out.read_bytes())
    meta = json.loads(sections[0][1])
    del meta["sha256"]
    meta["format"] = 1
    out.write_bytes(assemble([(sections[0][0], json.dumps(meta).encode()), *sections[1:]]))
    _assert_refused(cli, out, "format 1", "rebuild it with `hugind build`")


# --- pinning ------------------------------------------------------------------


def _check_digest(cli, agent: Path, *extra: str) -> str:
    res = cli("check", str(agent), "--json", *extra)
    assert res.code == 0, res.stderr
    digest = json.loads(res.stdout)["digest"]
    assert DIGEST.fullmatch(digest)
    return digest


def _assert_pin_refused(cli, agent: Path, wrong: str) -> None:
    for command in ("run", "check"):
        res = cli(command, str(agent), "--expect", wrong)
        assert res.code == 2, (command, res.stderr)
        assert "does not match --expect" in res.stderr and str(agent) in res.stderr
        assert MARKER not in res.stdout + res.stderr and "Traceback" not in res.stderr


def test_build_and_check_print_the_same_digest_and_expect_pins_the_artifact(cli, tmp_path):
    out, other = tmp_path / "a.wasm", tmp_path / "b.wasm"
    built = _build(cli, _agent(tmp_path / "src"), out)
    other_digest = _build(cli, _agent(tmp_path / "other", lib=LIB.replace("Upper", "Lower")), other)
    assert other_digest != built
    assert _check_digest(cli, out) == built
    words = cli("check", str(out))
    assert f"digest: {built}" in words.stdout
    ok = cli("run", str(out), "--expect", built, "--", "hi")
    assert ok.code == 0 and json.loads(ok.stdout.splitlines()[-1]) == "HI"
    assert cli("check", str(out), "--expect", built.upper().replace("SHA256:", "sha256:")).code == 0
    _assert_pin_refused(cli, other, built)
    bad = cli("run", str(out), "--expect", "sha256:1234")
    assert bad.code == 2 and "--expect must be sha256:<64 hex digits>" in bad.stderr


def test_folder_digest_covers_manifest_and_imported_modules_only(cli, tmp_path):
    agent = _agent(tmp_path / "src")
    (agent / "unused.js").write_text("export const never = 1;")
    digest = _check_digest(cli, agent)
    assert f"digest: {digest}" in cli("check", str(agent)).stdout
    ok = cli("run", str(agent), "--expect", digest, "--", "hi")
    assert ok.code == 0, ok.stderr
    assert json.loads(ok.stdout.splitlines()[-1]) == "HI"

    (agent / "unused.js").write_text("export const never = 2;")  # not imported: does not run
    assert _check_digest(cli, agent) == digest
    (agent / "lib/shout.js").write_text(LIB + "\n// reviewed? no\n")  # imported: runs
    edited = _check_digest(cli, agent)
    assert edited != digest
    _assert_pin_refused(cli, agent, digest)
    (agent / "lib/shout.js").write_text(LIB)
    # widened (a root of / is refused before the run now: #26)
    (agent / "agent.yaml").write_text(AGENT_YAML.replace("[data]", "[..]"))
    assert _check_digest(cli, agent) not in (digest, edited)
    _assert_pin_refused(cli, agent, digest)


def test_pinned_folder_is_sealed_to_its_import_graph(cli, tmp_path):
    """A dynamic import outside the static graph is not covered by the digest, so a pinned run refuses it."""
    main = "export default async () => (await import('./late.js')).v;"
    agent = write_agent(tmp_path / "src", {"main.js": main, "late.js": "export const v = 'unreviewed';"})
    (agent / "agent.yaml").write_text("name: late\nentry_point: main.js\n")
    assert json.loads(cli("run", str(agent)).stdout) == "unreviewed"
    res = cli("run", str(agent), "--expect", _check_digest(cli, agent))
    assert res.code == 1 and "not in the artifact" in res.stderr


def test_single_js_file_is_pinned(cli, tmp_path):
    script = tmp_path / "solo.js"
    script.write_text(f'print("{MARKER}"); export default () => 42;')
    digest = _check_digest(cli, script)
    ok = cli("run", str(script), "--expect", digest)
    assert ok.code == 0 and ok.stdout.splitlines() == [MARKER, "42"]
    script.write_text(f'print("{MARKER}"); export default () => 43;')
    _assert_pin_refused(cli, script, digest)


WAT = """(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "{text}\\n")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const {length}))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"""


def _wasm(text: str) -> bytes:
    return wasmtime.wat2wasm(WAT.format(text=text, length=len(text) + 1))


def test_raw_wasm_file_and_folder_are_pinned(cli, tmp_path):
    module = tmp_path / "solo.wasm"
    module.write_bytes(_wasm(MARKER))
    digest = _check_digest(cli, module)
    ok = cli("run", str(module), "--expect", digest)
    assert ok.code == 0 and ok.stdout == MARKER + "\n"
    module.write_bytes(_wasm(MARKER[::-1]))
    _assert_pin_refused(cli, module, digest)

    folder = write_agent(tmp_path / "wasm-agent", {"agent.yaml": "name: w\nentry_point: main.wasm\n"})
    (folder / "main.wasm").write_bytes(_wasm(MARKER))
    folder_digest = _check_digest(cli, folder)
    assert folder_digest != digest  # the manifest is part of a folder's digest
    assert cli("run", str(folder), "--expect", folder_digest).code == 0
    (folder / "agent.yaml").write_text("name: w\nentry_point: main.wasm\ndescription: edited\n")
    _assert_pin_refused(cli, folder, folder_digest)


def test_check_refuses_a_graph_that_does_not_compile_before_any_digest(cli, tmp_path):
    agent = write_agent(tmp_path / "src", {"main.js": "let = ;", "agent.yaml": "name: b\nentry_point: main.js\n"})
    for extra in ((), ("--json",), ("--expect", "sha256:" + "0" * 64)):
        res = cli("check", str(agent), *extra)
        assert res.code == 2 and "main.js:1:5: SyntaxError" in res.stderr and "digest" not in res.stdout


def test_every_single_byte_flip_or_cut_is_an_invalid_module(cli, tmp_path):
    """No edit anywhere in the file gets through, and none surfaces as anything but InvalidModule (exit 2)."""
    out = tmp_path / "a.wasm"
    _build(cli, _agent(tmp_path / "src"), out)
    data = out.read_bytes()
    assert artifact.decode(data, "a").modules
    for at in range(len(data)):
        for variant in (data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1 :], data[:at]):
            try:
                artifact.decode(variant, "a")
            except InvalidModule:
                continue
            raise AssertionError(f"an edit at byte {at} was accepted")


def test_module_names_the_loader_cannot_produce_are_refused(cli, tmp_path):
    out = tmp_path / "a.wasm"
    _build(cli, _agent(tmp_path / "src"), out)
    art = artifact.decode(out.read_bytes(), "a")
    odd = artifact.Artifact(art.engine_sha256, "../main.js", art.manifest_text, {"../main.js": b"\0"})
    out.write_bytes(artifact.encode(odd))  # a self-consistent digest: only the name is wrong
    _assert_refused(cli, out, "is not a relative .js path")


def test_metadata_nested_too_deep_is_refused(cli, tmp_path):
    """Before: 100,000 nested '[' in the metadata raised RecursionError: a traceback, exit 70."""
    out = tmp_path / "a.wasm"
    _build(cli, _agent(tmp_path / "src"), out)
    sections = split_sections(out.read_bytes())
    for depth in (300, 100_000):
        deep = b'{"format": ' + b"[" * depth + b"]" * depth + b"}"
        out.write_bytes(assemble([(sections[0][0], deep), *sections[1:]]))
        _assert_refused(cli, out, "metadata is not valid JSON (nested deeper than 256 levels)")
