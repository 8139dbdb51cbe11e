"""hugind build --standalone: one .wasm that runs the same under hugind, a bare
wasmtime WASI host and node's node:wasi, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import wasmtime

from hugind.standalone import standalone_meta
from tests.conftest import REPO, run_cli, write_agent
from tests.support.bare_wasi import Ran, node, run_hugind, run_node, run_wasmtime

HELLO = REPO / "examples" / "hello"

# A Javy program: no default export; it reads all of stdin and writes stdout itself.
JAVY_UPPER = """
const chunks = [];
let total = 0;
for (;;) {
  const buf = new Uint8Array(1000);  // smaller than the input: the loop must carry on
  const n = Javy.IO.readSync(0, buf);
  if (n === 0) break;
  chunks.push(buf.subarray(0, n));
  total += n;
}
const all = new Uint8Array(total);
let at = 0;
for (const c of chunks) { all.set(c, at); at += c.length; }
const text = new TextDecoder().decode(all);
Javy.IO.writeSync(1, new TextEncoder().encode(text.toUpperCase()));
console.log(`\\n${text.split("\\n").length - 1} lines, ${total} bytes`);
"""

# Results whose JSON only prints the same as `hugind run` (Python's json.dumps) with care.
VALUES = """
export default function () {
  return {
    "b": 0.1 + 0.2, "tiny": 1e-7, "small": -1.5e-5, "edge": 0.0001, "min": 5e-324, "huge": 1e21,
    "max": 2 ** 53, "negzero": -0, "nan": NaN, "text": 'é "q" \\\\ \\u2028 \\n\\t\\u0001 \\ud800 😀',
    "empty": [[], {}], "nested": [1, [2, {"k": null, "t": true, "f": false}]], "2": "integer key first",
    "dropped": undefined,
  };
}
"""

SET_RESULT = """
export default async function (input) {
  set_result({explicit: input.args});
  await new Promise((r) => setTimeout(r, 5));
  return "ignored: set_result wins";
}
"""

HOST_CALLS = """
export default async function () {
  const seen = [];
  try { fs.read_text("notes.txt"); } catch (e) { seen.push(`${e.name}: ${e.message}`); }
  try { await run_command("true"); } catch (e) { seen.push(`${e.name}: ${e.message}`); }
  try { ask_llm("hi"); } catch (e) { seen.push(e.name); }
  return seen;
}
"""

THROWS = """
export default function () { throw new TypeError("boom from the agent"); }
"""


def _build(source: Path, out: Path) -> Path:
    built = run_cli("build", "--standalone", str(source), "-o", str(out))
    assert built.code == 0, built.stderr
    assert built.stdout.startswith("sha256:"), built.stdout
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """name -> (source agent, standalone .wasm)."""
    root = tmp_path_factory.mktemp("standalone")
    agents = {"hello": HELLO}
    for name, text in {
        "javy": JAVY_UPPER,
        "values": VALUES,
        "set_result": SET_RESULT,
        "host_calls": HOST_CALLS,
        "throws": THROWS,
    }.items():
        agents[name] = root / f"{name}.js"  # a single .js file: an agent with an empty manifest
        agents[name].write_text(text)
    return {name: (src, _build(src, root / f"{name}-standalone.wasm")) for name, src in agents.items()}


def _bare_hosts() -> list:
    hosts = [run_wasmtime]
    if node() is None:  # pragma: no cover - CI has node
        pytest.fail("node is not installed: the node:wasi half of this check cannot run")
    return [*hosts, run_node]


def _everywhere(wasm: Path, *args: str, stdin: bytes = b"") -> dict[str, Ran]:
    runs = {"hugind run OUT.wasm": run_hugind(wasm, *args, stdin=stdin)}
    for host in _bare_hosts():
        runs[host.__name__] = host(wasm, *args, stdin=stdin)
    return runs


def _assert_same(reference: Ran, runs: dict[str, Ran]) -> None:
    assert reference.code == 0, reference.stderr
    for where, ran in runs.items():
        assert ran.code == 0, (where, ran.stderr)
        assert ran.stdout == reference.stdout, where


def test_the_module_is_a_plain_wasi_command(built):
    wasm = built["hello"][1]
    module = wasmtime.Module(wasmtime.Engine(), wasm.read_bytes())
    assert {imp.module for imp in module.imports} == {"wasi_snapshot_preview1"}
    assert sorted(exp.name for exp in module.exports) == ["_start", "memory"]
    meta = standalone_meta(wasm.read_bytes()) or {}
    assert meta["entry"] == "main.js" and meta["modules"] == ["lib/greet.js", "main.js"]


@pytest.mark.parametrize("args", [(), ("Ada", "Lovelace")])
def test_hello_prints_what_hugind_run_prints(built, args):
    source, wasm = built["hello"]
    reference = run_hugind(source, *args)
    assert reference.stdout.startswith(b'{"message": "Hello, ')
    _assert_same(reference, _everywhere(wasm, *args))


def test_a_declared_env_variable_reaches_the_agent_under_a_bare_host(built):
    source, wasm = built["hello"]
    env = {"HELLO_GREETING": "Salut", "UNDECLARED": "never seen"}
    reference = run_hugind(source, "x", env=env)
    assert b"Salut, x" in reference.stdout
    for host in _bare_hosts():
        ran = host(wasm, "x", env=env)
        assert (ran.code, ran.stdout) == (0, reference.stdout), host.__name__


def test_a_javy_program_transforms_stdin_to_stdout(built):
    source, wasm = built["javy"]
    stdin = ("héllo wörld, ünïcode ✓\n" * 400 + "last line\n").encode()
    reference = run_hugind(source, stdin=stdin)
    assert reference.stdout.startswith("HÉLLO WÖRLD, ÜNÏCODE ✓\n".encode())
    assert reference.stdout.endswith(f"\n401 lines, {len(stdin)} bytes\n".encode())
    _assert_same(reference, _everywhere(wasm, stdin=stdin))


@pytest.mark.parametrize("name", ["values", "set_result"])
def test_results_print_byte_for_byte_as_hugind_run_prints_them(built, name):
    source, wasm = built[name]
    reference = run_hugind(source, "a", "b")
    _assert_same(reference, _everywhere(wasm, "a", "b"))
    if name == "values":
        # the cases that differ between JSON.stringify and Python's json.dumps really occur
        cases = ['"tiny": 1e-07', '"small": -1.5e-05', '"huge": 1e+21', '"empty": [[], {}]', "\\u0001 \ufffd 😀"]
        for text in cases:
            assert text.encode() in reference.stdout, text


def test_host_calls_say_they_need_the_hugind_host(built):
    _source, wasm = built["host_calls"]
    runs = _everywhere(wasm)
    for where, ran in runs.items():
        assert ran.code == 0, (where, ran.stderr)
        seen = json.loads(ran.stdout)
        assert seen[0].startswith("Unsupported: fs.read_text needs the hugind host"), where
        assert seen[1].startswith("Unsupported: shell.run needs the hugind host"), where
        assert seen[2] == "Unsupported", where
    assert len({ran.stdout for ran in runs.values()}) == 1


def test_an_agent_error_is_exit_status_1_everywhere(built):
    _source, wasm = built["throws"]
    for where, ran in _everywhere(wasm).items():
        assert ran.code == 1, where
        assert ran.stdout == b"", where
    for host in _bare_hosts():
        assert b"TypeError: boom from the agent" in host(wasm).stderr, host.__name__


def test_the_printed_digest_pins_the_standalone_file(tmp_path):
    out = tmp_path / "pinned.wasm"
    built = run_cli("build", "--standalone", str(HELLO), "-o", str(out))
    assert built.code == 0, built.stderr
    digest = built.stdout.strip()
    pinned = run_cli("run", str(out), "--expect", digest, "--", "pin")
    assert pinned.code == 0 and '"Hello, pin!"' in pinned.stdout, pinned.stderr
    other = digest[:-1] + ("0" if digest[-1] != "0" else "1")
    refused = run_cli("run", str(out), "--expect", other, "--", "pin")
    assert refused.code == 2 and refused.stdout == "", refused.stderr


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("agentic", "is agentic (mode: agentic)"),
        ("unwritable", "cannot write"),
        ("wasm", "is already WebAssembly"),
    ],
)
def test_bad_input_is_one_line(tmp_path, case, expected):
    out = tmp_path / "out.wasm"
    if case == "agentic":
        agent = write_agent(
            tmp_path / "a",
            {"main.js": "set_system_prompt('x');"},
            {"name": "ag", "entry_point": "main.js", "mode": "agentic"},
        )
    elif case == "unwritable":
        agent = HELLO
        out = tmp_path / "not-a-dir"
        out.write_text("a file, so nothing can be written below it")
        out = out / "out.wasm"
    else:
        agent = tmp_path / "plain.wasm"
        agent.write_bytes(b"\0asm\x01\0\0\0")
    result = run_cli("build", "--standalone", str(agent), "-o", str(out))
    assert result.code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("hugind: error: ") and expected in lines[0], result.stderr
    assert not out.exists()


def test_hugind_run_keeps_its_deadline_over_a_long_timer(tmp_path):
    # The standalone event loop sleeps in slices, so the guest runs code often
    # enough for hugind's epoch deadline to stop it; one long WASI sleep would not.
    sleepy = tmp_path / "sleepy.js"
    sleepy.write_text("export default async () => { await new Promise((r) => setTimeout(r, 600000)); };")
    wasm = _build(sleepy, tmp_path / "sleepy.wasm")
    result = run_cli("run", str(wasm), "--timeout", "1", timeout=60)
    assert result.code == 4, result.stderr
    assert "deadline exceeded" in result.stderr


def test_a_missing_required_env_variable_fails_as_under_hugind_run(tmp_path):
    agent = write_agent(
        tmp_path / "needs-env",
        {"main.js": "export default (input) => input.meta.env.TOKEN_NAME;"},
        {"name": "needs-env", "entry_point": "main.js", "env": [{"name": "TOKEN_NAME", "required": True}]},
    )
    wasm = _build(agent, tmp_path / "needs-env.wasm")
    reference = run_hugind(agent)
    assert reference.code == 2 and b"required environment variable not set: TOKEN_NAME" in reference.stderr
    for host in _bare_hosts():
        ran = host(wasm)
        assert (ran.code, ran.stdout) == (2, b""), host.__name__
        assert b"required environment variable not set: TOKEN_NAME" in ran.stderr, host.__name__
        given = host(wasm, env={"TOKEN_NAME": "t-1"})
        assert (given.code, given.stdout) == (0, b'"t-1"\n'), host.__name__
