"""Array.prototype.sort and %TypedArray%.prototype.sort with a comparator run
hugind's merge sort (runtimes/js/fast_sort.c) instead of QuickJS's introsort.

The sort is stable, so for a consistent comparator there is one right answer,
and it must be node's, across the sizes where the sort's runs and merges begin
and end. The point of the change is fewer comparator calls, which is counted;
and a comparator that throws, lies or changes the array must end the sort
cleanly.

`(a, b) => a - b` and `(a, b) => b - a` over numbers (in an Array or a typed
array that holds numbers) are not called at all: the sort computes the
subtraction's sign itself. That fast path must give what
calling gives, element for element (-0, NaN and Infinity included), which a
comparator with the same result but another body shows; it must step aside for
anything that is not a number; and it must be taken, which fuel shows.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess

import pytest

from hugind.errors import LimitExceeded
from tests.runtime.helpers import run_captured

NODE = shutil.which("node")

CASES = r"""
function cases() {
  let seed = 11;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const out = {};
  // Sizes around the 32-element runs and each merge width.
  for (const n of [0, 1, 2, 3, 31, 32, 33, 63, 64, 65, 100, 257, 1000, 4097]) {
    const items = Array.from({ length: n }, (_, i) => ({ k: Math.floor(rnd() * 7), i }));
    out["stable" + n] = items.slice().sort((x, y) => x.k - y.k).map((o) => o.i);
    out["desc" + n] = items.map((o) => o.k * 10000 + o.i).sort((x, y) => y - x);
    out["toSorted" + n] = items.map((o) => o.k).toSorted((x, y) => x - y);
    const floats = new Float64Array(items.map((o) => o.k + o.i / 1e5));
    out["typed" + n] = Array.from(floats.sort((x, y) => Math.floor(x) - Math.floor(y)));
    out["int8" + n] = Array.from(new Int8Array(items.map((o) => o.i - 50)).sort((x, y) => y - x));
    out["default" + n] = items.map((o) => o.i * 3).sort();
  }
  out.holes = [3, 1, undefined, 10, 2, , 1, null, "b", "a"].sort().map(String);
  out.holesCmp = [3, , 1, undefined, 2].sort((x, y) => x - y).map(String);
  out.strings = ["b", "a", "ab", "", "B", "\u00e9", "e"].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  out.arrayLike = Object.entries(Array.prototype.sort.call({ length: 4, 0: 3, 1: 1, 3: 2 }, (x, y) => x - y));
  let calls = 0;
  const thrower = Array.from({ length: 100 }, (_, i) => (i * 37) % 100);
  try {
    thrower.sort((x, y) => { if (++calls === 50) throw new Error("stop at 50"); return x - y; });
  } catch (e) { out.thrown = [e.message, calls]; }
  out.afterThrow = thrower.slice().sort((x, y) => x - y).join() === Array.from({ length: 100 }, (_, i) => i).join();
  return out;
}
"""

COUNTS = r"""
function counts() {
  let seed = 5;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const count = (a) => { let n = 0; a.sort((x, y) => { n++; return x - y; }); return n; };
  const n = 200000;
  const random = Array.from({ length: n }, rnd);
  const ascending = Array.from({ length: n }, (_, i) => i);
  return { random: count(random), ascending: count(ascending) };
}
"""

ROBUST = r"""
function robust() {
  let seed = 3;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const values = Array.from({ length: 3000 }, (_, i) => i);
  const liar = values.slice().sort(() => (rnd() < 0.5 ? -1 : 1));           // inconsistent
  const grower = values.slice(0, 200);
  grower.sort((x, y) => { if (grower.length < 300) grower.push(-1); return x - y; });  // mutates
  const typed = new Float64Array(values.slice(0, 500));
  typed.sort(() => (rnd() < 0.5 ? -1 : 1));
  return {
    liarIsPermutation: liar.slice().sort((x, y) => x - y).join() === values.join(),
    grownLength: grower.length,
    typedIsPermutation: Array.from(typed).sort((x, y) => x - y).join() === values.slice(0, 500).join(),
  };
}
"""


def _node(source: str, call: str, tmp_path) -> object:
    script = tmp_path / "sort.cjs"
    script.write_text(source + f"console.log(JSON.stringify({call}));\n")
    proc = subprocess.run([NODE, str(script)], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(proc.stdout)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_sorts_give_what_node_gives(make_agent, tmp_path):
    ours = run_captured(make_agent({"main.js": CASES + "export default () => cases();"})).result.value
    assert ours == _node(CASES, "cases()", tmp_path)
    assert ours["thrown"] == ["stop at 50", 50]
    assert ours["afterThrow"] is True


def test_comparator_calls_stay_near_the_information_bound(make_agent):
    counts = run_captured(make_agent({"main.js": COUNTS + "export default () => counts();"})).result.value
    n = 200000
    # log2(n!) is 3.23M for n = 200k; QuickJS's introsort made 3.75M, this sort 3.33M.
    assert counts["random"] < n * math.log2(n)  # 3.52M
    assert counts["ascending"] < 1.1 * n  # a run in order costs one comparison per element


def test_a_lying_or_mutating_comparator_ends_with_the_same_elements(make_agent):
    got = run_captured(make_agent({"main.js": ROBUST + "export default () => robust();"})).result.value
    assert got == {"liarIsPermutation": True, "grownLength": 300, "typedIsPermutation": True}


# The same subtraction in a body the recogniser does not match: always called.
NUMERIC = r"""
function numeric() {
  let seed = 17;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const special = [0, -0, NaN, Infinity, -Infinity, 1e308, -1e308, 5e-324, -5e-324, 2 ** 31, -(2 ** 31), 0.1];
  const pick = () => (rnd() < 0.2 ? special[Math.floor(rnd() * special.length)]
    : rnd() < 0.5 ? Math.floor(rnd() * 40) - 20 : (rnd() - 0.5) * 1e3);
  const show = (a) => a.map((x) => (Object.is(x, -0) ? "-0" : String(x))).join();
  const called = {
    lr: (x, y) => { const d = x - y; return d; },
    rl: (x, y) => { const d = y - x; return d; },
  };
  const out = { differ: [] };
  for (const n of [2, 31, 33, 65, 500, 3000]) {
    const a = Array.from({ length: n }, pick);
    const pairs = [
      [a.slice().sort((x, y) => x - y), a.slice().sort(called.lr)],
      [a.slice().sort((x, y) => y - x), a.slice().sort(called.rl)],
      [a.toSorted(function (p, q) { return p - q; }), a.toSorted(called.lr)],
    ];
    for (const [fast, slow] of pairs) if (show(fast) !== show(slow)) out.differ.push(n);
    const kinds = [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array,
      Uint32Array, Float32Array, Float64Array];
    if (typeof Float16Array !== "undefined") kinds.push(Float16Array);
    for (const Kind of kinds) {
      const t = Kind.from(a, (x) => (Kind.name.startsWith("Float") ? x : Math.trunc(x) || 0));
      const fast = [t.slice().sort((x, y) => x - y), t.slice().sort((x, y) => y - x)];
      const slow = [t.slice().sort(called.lr), t.slice().sort(called.rl)];
      if (show([...fast[0], ...fast[1]]) !== show([...slow[0], ...slow[1]])) out.differ.push(Kind.name + n);
    }
  }
  // Not all numbers: the comparator runs, so valueOf does, as node's does.
  let valueOfCalls = 0;
  const boxed = { valueOf() { valueOfCalls++; return 2; } };
  out.mixed = show([3, boxed, 1].sort((x, y) => x - y).map(Number));
  out.valueOfCalled = valueOfCalls > 0;
  out.strings = ["10", "9", "1"].sort((x, y) => x - y);
  out.holes = String([3, , 1, undefined, -0, 2].sort((x, y) => x - y));
  try { [2n, 1n].sort((x, y) => x - y); out.bigint = "sorted"; } catch (e) { out.bigint = e.constructor.name; }
  try { new BigInt64Array([2n, 1n]).sort((x, y) => x - y); out.bigintTyped = "sorted"; }
  catch (e) { out.bigintTyped = e.constructor.name; }
  try { [2, 1].sort(class { constructor(x, y) { return x - y; } }); out.classCtor = "sorted"; }
  catch (e) { out.classCtor = e.constructor.name; }
  out.bound = [3, 1, 2].sort(((x, y) => x - y).bind(null)).join();
  out.otherBody = [3, 1, 2, -0, 0].sort((x, y) => (x - y) * 2).map(String).join();
  return out;
}
"""


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_a_recognised_numeric_comparator_sorts_as_calling_it_does(make_agent, tmp_path):
    ours = run_captured(make_agent({"main.js": NUMERIC + "export default () => numeric();"})).result.value
    assert ours["differ"] == []
    assert ours["valueOfCalled"] is True
    # node sorts these with the same comparator results, and NaN-free inputs have one answer.
    node = _node(NUMERIC, "numeric()", tmp_path)
    keys = ("mixed", "strings", "holes", "bigint", "bigintTyped", "classCtor", "bound", "otherBody")
    for key in keys:
        assert ours[key] == node[key], key


SORT_20K = r"""
let seed = 1;
const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
const a = MAKE(Array.from({ length: 20000 }, () => rnd() * 1e6));
export default () => { a.sort(COMPARATOR); return a[0] <= a[1] && a[19998] <= a[19999]; };
"""


@pytest.mark.parametrize("make", ["(a) => a", "(a) => Float64Array.from(a)"], ids=["array", "typed"])
def test_a_recognised_comparator_is_not_called(make_agent, make):
    # Calling the comparator for 20k numbers costs about 220M wasm instructions; the
    # recognised one about 35M. A budget between the two tells the paths apart.
    budget = 150_000_000
    source = SORT_20K.replace("MAKE", f"({make})")
    fast = make_agent({"main.js": source.replace("COMPARATOR", "(x, y) => x - y")})
    assert run_captured(fast, fuel=budget).result.value is True
    slow = make_agent({"main.js": source.replace("COMPARATOR", "(x, y) => { const d = x - y; return d; }")})
    with pytest.raises(LimitExceeded, match="fuel exhausted"):
        run_captured(slow, fuel=budget)
