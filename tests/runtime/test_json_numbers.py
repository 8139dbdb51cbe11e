"""JSON.parse's numbers: the engine's own conversion (runtimes/js/json_number.c).

QuickJS-NG parses JSON numbers with strtod, which the engine build replaces
(wasi-libc's works in software float128 and was 15% of JSON.parse's time). The
replacement has a fast path (Clinger's: significand <= 2^53, |exponent| <= 22)
and falls back to QuickJS-NG's exact js_atod, so every number must come out
bit-for-bit as Number() (js_atod itself) and as node's JSON.parse give it.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.runtime.helpers import run_captured

NODE = shutil.which("node")

# The texts: the edges of the fast path and of the double range, then random
# doubles in every notation (shortest, fixed, exponential, 1..21 significant
# digits), so both the fast path and the fallback run thousands of times.
CASES = r"""
function cases() {
  const out = ["0", "-0", "1", "-1", "0.1", "-0.5", "0.30000000000000004", "4.35", "1E+2", "1e-7",
    "9007199254740991", "9007199254740992", "9007199254740993", "18014398509481985",
    "1e22", "1e23", "1.5e22", "9007199254740993e-22", "9007199254740991e22", "0.1e-22",
    "1.7976931348623157e308", "1.7976931348623159e308", "1e309", "-1e309", "5e-324",
    "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-400", "0e99999", "-0.0e-5",
    "2.2250738585072011e-308", "2.2250738585072014e-308", "1234567890123456789",
    "12345678901234567890", "123456789012345678901234567890", "0.000000000000000000001",
    "100000000000000000000000", "7.0000000000000001", "0.1000000000000000055511151231257827"];
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const words = new Uint32Array(2), f64 = new Float64Array(words.buffer);
  const digits = (n) => { let d = String(1 + (next() % 9)); while (d.length < n) d += next() % 10; return d; };
  for (let i = 0; i < 4000; i++) {
    // A random double from its bits, in each of the engine's notations.
    words[0] = next(); words[1] = next();
    const x = f64[0];
    if (Number.isFinite(x)) {
      out.push(String(x), x.toPrecision(1 + (i % 21)), x.toExponential(i % 20));
      if (Math.abs(x) < 1e21) out.push(x.toFixed(i % 12));
    }
    // Text built from integers only (no engine arithmetic, so node writes the same
    // text): 1..25 significant digits, a point anywhere, an exponent or none.
    const d = digits(1 + (next() % 25)), point = next() % (d.length + 1);
    const lead = next() % 3 === 0 ? "0." + "0".repeat(next() % 8) : "";
    const text = lead ? lead + d : d.slice(0, point) + (point < d.length ? "." + d.slice(point) : "");
    const sign = next() % 4 === 0 ? "-" : "";
    out.push(sign + (text.startsWith(".") ? "0" + text : text));
    out.push(sign + d.slice(0, 1) + (d.length > 1 ? "." + d.slice(1) : "") + "e" + ((next() % 80) - 40));
  }
  return out;
}
function hex(x) {
  const v = new DataView(new ArrayBuffer(8));
  v.setFloat64(0, x);
  return v.getUint32(0).toString(16).padStart(8, "0") + v.getUint32(4).toString(16).padStart(8, "0");
}
"""


def test_json_numbers_match_number_conversion(make_agent):
    agent = make_agent(
        {
            "main.js": CASES
            + """
            export default function () {
              const texts = cases();
              const bad = [];
              for (const s of texts) {
                const parsed = JSON.parse(s), exact = Number(s);
                if (!Object.is(parsed, exact)) bad.push([s, hex(parsed), hex(exact)]);
              }
              // A number inside a document goes the same way as a bare one.
              const doc = JSON.parse("[" + texts.join(",") + "]");
              for (let i = 0; i < texts.length; i++)
                if (!Object.is(doc[i], Number(texts[i]))) bad.push(["in array", texts[i]]);
              return [texts.length, bad.slice(0, 10)];
            }
            """
        }
    )
    count, bad = run_captured(agent).result.value
    assert count > 20000
    assert bad == []


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_json_numbers_match_node(make_agent, tmp_path):
    body = "const texts = cases(); return texts.map((s) => hex(JSON.parse(s))).join(' ');"
    agent = make_agent({"main.js": CASES + f"export default function () {{ {body} }}"})
    ours = run_captured(agent).result.value
    script = tmp_path / "node_numbers.cjs"
    script.write_text(CASES + f"console.log(JSON.stringify((function () {{ {body} }})()));\n")
    proc = subprocess.run([NODE, str(script)], capture_output=True, text=True, check=True, timeout=60)
    theirs = json.loads(proc.stdout)
    assert len(ours.split()) > 20000
    assert ours == theirs
