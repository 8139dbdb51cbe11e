"""Numbers to text in base 10 (runtimes/js/fast_dtoa.c): the shortest digits
that read back as the same double, the closest of them, laid out as
Number::toString lays them out.

References: node, for ~330k doubles (random bit patterns, so every exponent
and subnormals; the 3000 smallest subnormals; each power of two and the double just below it; the numbers
people write; the edges of the layout's notations); and, without node, the
engine's own plain path: toPrecision(p) (QuickJS's js_dtoa) for the fewest p
that reads back, which for a double that is not a power of two is the
standard's answer.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.runtime.helpers import run_captured

NODE = shutil.which("node")

DOUBLES = r"""
let seed = 987654321;
const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
const view = new DataView(new ArrayBuffer(8));
function bits(hi, lo) { view.setUint32(0, hi); view.setUint32(4, lo); return view.getFloat64(0); }
function doubles(random) {
  const out = [5e-324, 1e-323, 2.2250738585072014e-308, 2.225073858507201e-308, 1.7976931348623157e308,
    0.1, 0.2, 0.3, 1 / 3, 2 / 3, 4.35, 1.5, 100, 1e100, 123e-20, 9007199254740993, 2 ** 53, 2 ** 60, 2 ** -20,
    1e21, 999999999999999900000, 123456789012345680000, 1e-7, 1e-6, 5e-7, 0.000001234, 0.0000001234,
    2.959230270675192e17, 8.492010725102e17, 29517495334098030, 0, -0, NaN, Infinity, -Infinity];
  for (let e = 1; e < 2047; e++) out.push(bits(e << 20, 0), bits((e << 20) | 0xfffff, 0xffffffff));
  for (let c = 1; c < 3000; c++) out.push(bits(0, c)); // subnormals with few digits: 6e-323
  for (let i = 0; i < random; i++) {
    const x = bits(next(), next());
    if (x === x) out.push(x);
  }
  for (let i = 0; i < random / 4; i++) out.push((next() % 100000) / 100, next() / 1e3, (next() % 1000) * 1e-5);
  return out.flatMap((x) => [x, -x]);
}
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_numbers_print_as_node_prints_them(make_agent, tmp_path):
    source = DOUBLES + "export default () => doubles(120000).map(String).join('\\n');"
    ours = run_captured(make_agent({"main.js": source})).result.value
    script = tmp_path / "doubles.cjs"
    script.write_text(DOUBLES + "process.stdout.write(doubles(120000).map(String).join('\\n'));\n")
    want = subprocess.run([NODE, str(script)], capture_output=True, text=True, check=True, timeout=120).stdout
    ours_lines, want_lines = ours.split("\n"), want.split("\n")
    assert len(ours_lines) == len(want_lines) > 300000
    differ = [(o, w) for o, w in zip(ours_lines, want_lines, strict=True) if o != w]
    assert differ == []


def test_numbers_print_the_fewest_digits_that_read_back(make_agent):
    # toPrecision is QuickJS's own conversion; the fewest digits p that read back
    # give the answer for every double that is not a power of two.
    source = (
        DOUBLES
        + """
    export default () => {
      const wrong = [];
      for (const x of doubles(20000)) {
        if (!Number.isFinite(x) || x === 0 || Math.log2(Math.abs(x)) % 1 === 0) continue;
        const text = String(x);
        let p = 1;
        while (Number(x.toPrecision(p)) !== x) p++;
        const mantissa = text.replace(/^-/, "").replace(/e.*$/, "").replace(".", "");
        const digits = mantissa.replace(/^0+/, "").replace(/0+$/, "");
        const same = Number(text) === x && Number(x.toPrecision(p)) === Number(text);
        if (!same || digits.length > p) wrong.push([x, text, p]);
      }
      return { wrong: wrong.slice(0, 10), checked: doubles(20000).length };
    };
    """
    )
    got = run_captured(make_agent({"main.js": source})).result.value
    assert got["wrong"] == []
    assert got["checked"] > 40000


def test_number_layout_follows_number_to_string(make_agent):
    source = """
    export default () => [1e21, 1e20, 123456789012345680000, 1.5e-7, 0.000001, 0.0000015, -1e-7, 2e-323,
      1.7976931348623157e308, 100, 0.1, -0, NaN, -Infinity, 12.5, 1e-6, 255 / 16, 7.120236347223045e-307].map(String);
    """
    got = run_captured(make_agent({"main.js": source})).result.value
    assert got == [
        "1e+21",
        "100000000000000000000",
        "123456789012345680000",
        "1.5e-7",
        "0.000001",
        "0.0000015",
        "-1e-7",
        "2e-323",
        "1.7976931348623157e+308",
        "100",
        "0.1",
        "0",
        "NaN",
        "-Infinity",
        "12.5",
        "0.000001",
        "15.9375",
        "7.120236347223045e-307",  # QuickJS's own js_dtoa gives 7.1202363472230444e-307
    ]
