"""The agents every differential test runs down both paths, and how a run is compared.

Real agents of each kind hugind runs: the ``hello`` example (a JS script with
a module import, env, a timer and stderr), JS agents that read files under
policy and hit a denial, throw, or read stdin; the ``wasm-files`` example
built from C (raw wasm over the hugind ABI), once reading its notes and once
refused a path (exit 1); a raw WASI command written in WAT that writes both
streams, sleeps in ``poll_oneoff``, is denied a host call and exits 3; and an
agentic agent that calls a tool, against the loopback chat server.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import wasmtime
import yaml

from tests.support.chat_server import Reply, tool_call

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"

# Normalised before comparing, and only these: the audit log's "ts" (wall-clock time
# of each decision). Everything else (stdout, stderr, exit status, every other audit
# field) must be byte-identical.
_TS = re.compile(r'"ts": "[^"]*"')


def normalise(run: dict[str, Any]) -> dict[str, Any]:
    audit = run["audit"]
    return {**run, "audit": _TS.sub('"ts": "<ts>"', audit) if audit is not None else None}


FILES_JS = """
export default async (input) => {
  console.error("files: start");
  const text = fs.read_text("data/a.txt");
  let denied = null;
  try { fs.read_text("/etc/hostname"); } catch (e) { denied = String(e); }
  console.log("files: read " + text.length + " bytes");
  return {text, denied, exists: fs.exists("data/missing.txt")};
};
"""
THROWS_JS = """
export default () => { console.log("about to fail"); throw new Error("the agent gave up"); };
"""
# A blocking host call that outlives the run: the import raises the deadline (raw path:
# a trap and take_failure; public path: wasmtime-py re-raises the handler's exception).
LATE_JS = 'export default () => ask_llm("late: answer after the deadline");'
STDIN_JS = "export default () => { const b = new Uint8Array(16); return {read: Javy.IO.readSync(0, b)}; };"
AGENTIC_JS = """
set_system_prompt("differential");
set_max_turns(3);
register_tool({
  name: "echo",
  description: "Echo its argument",
  parameters: {type: "object", properties: {a: {type: "string"}}},
  execute: (args) => "echoed " + JSON.stringify(args),
});
"""

_REQUEST = b'{"op":"fs.read_text","args":{"path":"/etc/hostname"}}'
_SLEEP = (7).to_bytes(8, "little") + bytes(8) + (1).to_bytes(4, "little") + bytes(4)
_SLEEP += (1_000_000).to_bytes(8, "little") + bytes(16)  # 1 ms on the monotonic clock, relative


def _hex(blob: bytes) -> str:
    return "".join(f"\\{b:02x}" for b in blob)


_WAT_COMMAND = f"""
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (import "hugind" "call" (func $call (param i32 i32) (result i32)))
  (import "hugind" "take" (func $take (param i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "out: raw agent\\n")
  (data (i32.const 200) "err: to stderr\\n")
  (data (i32.const 300) "{_hex(_REQUEST)}")
  (data (i32.const 1024) "{_hex(_SLEEP)}")
  (func $write (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func (export "_start") (local $n i32)
    (call $write (i32.const 1) (i32.const 100) (i32.const 15))
    (call $write (i32.const 2) (i32.const 200) (i32.const 15))
    (drop (call $poll (i32.const 1024) (i32.const 1104) (i32.const 1) (i32.const 1200)))
    (local.set $n (call $call (i32.const 300) (i32.const {len(_REQUEST)})))
    (if (i32.gt_s (local.get $n) (i32.const 0))
      (then (drop (call $take (i32.const 4096) (local.get $n)))
            (call $write (i32.const 1) (i32.const 4096) (local.get $n))))
    (call $exit (i32.const 3)))
)
"""


def _agent(root: Path, files: dict[str, str | bytes | bytearray], manifest: dict[str, Any]) -> Path:
    root.mkdir(parents=True)
    for rel, body in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(body, bytes | bytearray):
            path.write_bytes(body)
        else:
            path.write_text(body)
    (root / "agent.yaml").write_text(yaml.safe_dump(manifest, sort_keys=False))
    return root


def make_cases(root: Path, wasm_files: Path | None, backend: str) -> list[dict[str, Any]]:
    """The command lines (agent, args, backend) to run down each path."""
    script = {"mode": "script", "entry_point": "main.js"}
    files = _agent(
        root / "files",
        {"main.js": FILES_JS, "data/a.txt": "some notes\n"},
        {"name": "files", **script, "permissions": {"filesystem": {"read": ["data"]}}},
    )
    throws = _agent(root / "throws", {"main.js": THROWS_JS}, {"name": "throws", **script})
    stdin = _agent(root / "stdin", {"main.js": STDIN_JS}, {"name": "stdin", **script})
    command = _agent(
        root / "wat-command",
        {"agent.wasm": wasmtime.wat2wasm(_WAT_COMMAND)},
        {"name": "wat-command", "mode": "script", "entry_point": "agent.wasm"},
    )
    late = _agent(root / "late", {"main.js": LATE_JS}, {"name": "late", **script})
    agentic = _agent(
        root / "agentic",
        {"main.js": AGENTIC_JS},
        {"name": "agentic", "mode": "agentic", "entry_point": "main.js", "tool_format": "native"},
    )
    cases = [
        {"name": "hello", "agent": str(EXAMPLES / "hello"), "args": ["differential", "world"]},
        {"name": "js-files-denied", "agent": str(files)},
        {"name": "js-throws", "agent": str(throws)},
        {"name": "js-stdin", "agent": str(stdin)},
        {"name": "wat-command-exit-3", "agent": str(command)},
        {"name": "agentic-tool", "agent": str(agentic), "args": ["go"], "backend": backend},
        {"name": "js-llm-past-deadline", "agent": str(late), "backend": backend, "timeout": 0.5},
    ]
    if wasm_files is not None:
        built = root / "wasm-files"
        shutil.copytree(EXAMPLES / "wasm-files", built, ignore=shutil.ignore_patterns("*.wasm", "*.c"))
        shutil.copyfile(wasm_files, built / "agent.wasm")
        cases += [
            {"name": "wasm-files", "agent": str(built)},
            {"name": "wasm-files-denied", "agent": str(built), "args": ["/etc/hostname"]},
        ]
    return cases


def chat_step(request: Any) -> Reply:
    """The model's answer, decided from the conversation alone (the same for every path)."""
    last = request.messages[-1] if request.messages else {}
    if "late:" in str(last.get("content")):
        return Reply("too late", delay=0.9)
    if last.get("role") == "tool":
        return Reply("done: " + str(last.get("content")))
    return Reply(tool_calls=[tool_call("echo", {"a": "xyz"}, id="call_fixed")])


def describe(run: dict[str, Any]) -> str:
    return json.dumps(run, indent=1)[:3000]
