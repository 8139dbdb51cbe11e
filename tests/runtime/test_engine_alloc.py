"""The JS engine's realloc (runtimes/js/engine_alloc.c): a block that outgrows
its malloc slot is moved with memcpy (wasm's memory.copy) rather than by the
C library's one-byte copy loop.

Growing arrays, strings, string buffers, maps and resizable ArrayBuffers step
by step moves blocks across every slot size, small and big: what comes out
must be what node computes, and since each moved block's old slot is freed,
doing it again and again under a tight memory cap must finish.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.runtime.helpers import run_captured

NODE = shutil.which("node")

GROW = r"""
function grow(rounds) {
  let sum = 0;
  const mix = (x) => { sum = (sum * 31 + x) % 1000000007; };
  for (let r = 0; r < rounds; r++) {
    const a = [];
    for (let i = 0; i < 300000 + r; i++) a.push(i ^ r);          // the array's values move
    mix(a.length); mix(a[0]); mix(a[1234]); mix(a[a.length - 1]); mix(a.reduce((s, x) => (s + x) % 65521, 0));
    let s = "";
    for (let i = 0; i < 20000; i++) s += String.fromCharCode(97 + ((i * 7 + r) % 26));  // a string buffer
    mix(s.length); mix(s.charCodeAt(0)); mix(s.charCodeAt(19999)); mix(s.indexOf("zz"));
    const wide = s.slice(0, 5000) + "\u00e9\u4e2d" + s.slice(5000);                     // two-byte text
    mix(wide.length); mix(wide.charCodeAt(5001)); mix(wide.lastIndexOf("ab"));
    const text = JSON.stringify(a.slice(0, 40000).map((x) => ({ x, s: "v" + x })));  // a growing StringBuffer
    mix(text.length); mix(text.charCodeAt(text.length >> 1));
    const m = new Map();
    for (let i = 0; i < 50000; i++) m.set("k" + i, i);                                 // hash tables grow
    mix(m.size); mix(m.get("k49999"));
    const sorted = a.slice(0, 100000).sort((x, y) => y - x);                            // sort's scratch array
    mix(sorted[0]); mix(sorted[99999]);
    const buf = new ArrayBuffer(16, { maxByteLength: 1 << 22 });
    const bytes = new Uint8Array(buf);
    for (let n = 16; n <= 1 << 22; n *= 2) { buf.resize(n); bytes[n - 1] = n & 255; }
    mix(buf.byteLength); mix(bytes[(1 << 21) - 1]); mix(bytes.reduce((s, x) => s + x, 0));
  }
  return sum;
}
"""


def _limits(**limits):
    return {"permissions": {"limits": limits}}


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_growing_blocks_compute_what_node_computes(make_agent, tmp_path):
    agent = make_agent({"main.js": GROW + "export default () => grow(3);"})
    ours = run_captured(agent).result.value
    script = tmp_path / "grow.cjs"
    script.write_text(GROW + "console.log(JSON.stringify(grow(3)));\n")
    proc = subprocess.run([NODE, str(script)], capture_output=True, text=True, check=True, timeout=120)
    assert ours == json.loads(proc.stdout)


def test_moved_blocks_are_freed_so_repeated_growth_fits_a_tight_cap(make_agent):
    # Each round grows ~10 MiB of blocks and drops them; 12 rounds fit 64 MiB only
    # if every block that moved left its old slot free for the next round.
    agent = make_agent({"main.js": GROW + "export default () => grow(12);"}, **_limits(memory_mb=64))
    assert isinstance(run_captured(agent).result.value, int)


def test_a_runaway_array_still_ends_in_a_catchable_out_of_memory(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default function () {
              let grown = [];
              let caught;
              try { for (let i = 0; ; i++) grown.push(i); }
              catch (e) { grown = null; caught = e; }
              return [caught.name, caught.message];
            }
            """
        },
        **_limits(memory_mb=64),
    )
    assert run_captured(agent).result.value == ["InternalError", "out of memory"]
