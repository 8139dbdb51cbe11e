"""JSON.stringify's fast path (runtimes/js/fast_stringify.c) against node.

The fast path writes plain objects, fast arrays and primitives itself and hands
anything else to the engine's own stringify, restarting the call. Either way
the text must be the one the spec gives, so thousands of generated values
(every kind of string unit, number edge, key kind, prototype, hole, exotic
object, indentation) are compared byte for byte with node. Where node words an
error differently (cycles, BigInt), the message must be the one the engine gave
before the fast path existed. Late surprises (a getter after thousands of plain
objects, toJSON put on a built-in prototype at run time, a cycle at the end)
must behave as if the fast path had never started: every getter and toJSON
runs exactly as often as in node.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.runtime.helpers import run_captured

NODE = shutil.which("node")

# The engine before the fast path (QuickJS-NG's js_json_to_str) throws these;
# node's wording differs.
CIRCULAR = "circular reference"
BIGINT = "BigInt are forbidden in JSON.stringify"

GENERATED = r"""
function generated(count) {
  let seed = 20261127;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const pick = (a) => a[Math.floor(rnd() * a.length)];
  const UNITS = ["a", "Z", "0", " ", "\"", "\\", "/", "\b", "\f", "\n", "\r", "\t", "\u0000", "\u0001",
    "\u001f", "\u007f", "\u0080", "\u00e9", "\u00ff", "\u0100", "\u2028", "\u2029", "\ufeff", "\uffff",
    "\ud800", "\udbff", "\udc00", "\udfff", "\ud83d\ude00", "\u65e5", "<", "'", "`", "abc", "hello world"];
  const str = () => {
    const n = Math.floor(rnd() * 9);
    const parts = [];
    for (let i = 0; i < n; i++) parts.push(pick(UNITS));
    if (rnd() < 0.5) return parts.join("");            // one flat string
    let s = "";
    for (const p of parts) s += p;                      // built by concatenation
    return s;
  };
  const NUMS = [0, -0, 1, -1, 42, 2147483647, -2147483648, 2147483648, 4294967296, 9007199254740991,
    9007199254740993, 1e21, 1e20, 123456789012345680000, 1e-6, 1e-7, 5e-324, -5e-324,
    1.7976931348623157e308, 2.2250738585072014e-308, 0.1, 0.3, 1 / 3, -1.5, NaN, Infinity, -Infinity,
    2 ** 31, -(2 ** 53), 1e300 * 10, 100, 1.5e-10, 4.35, 0.000001, 1234.5678];
  const num = () => {
    const r = rnd();
    if (r < 0.5) return pick(NUMS);
    if (r < 0.7) return Math.floor(rnd() * 2000000) - 1000000;
    // Powers of ten as literals: V8's 10 ** -5 is not the double nearest 1e-5.
    if (r < 0.9) return (rnd() - 0.5) * pick([1e-20, 1e-9, 1e-7, 1e-5, 1e-3, 1, 1e3, 1e15, 1e17, 1e21, 1e300]);
    return Math.floor(rnd() * 1000) / 8;
  };
  const KEYS = ["a", "b", "id", "name", "", " ", "\u00e9", "\u65e5\u672c", "\u2028", "\ud800", "\udc00x",
    "\ud83d\ude00", "\"q\"", "back\\", "\n", "\u0000", "\u001f", "constructor", "toString", "valueOf",
    "hasOwnProperty", "__proto__", "length", "NaN", "-1", "01", "1.5", "1e3", "4294967295", "toJSO"];
  const INDEX_KEYS = ["0", "1", "12", "4294967294", "7"];
  const key = () => (rnd() < 0.03 ? pick(INDEX_KEYS) : pick(KEYS));
  const PROTO = { inherited: 1, also: "x" };
  class Point { constructor(x, y) { this.x = x; this.y = y; } norm() { return this.x + this.y; } }
  class Stamp { constructor(v) { this.v = v; } toJSON(k) { return ["stamp", k, this.v]; } }
  const FUNCS = [function f() {}, () => 1, class K {}, Math.max, (function () {}).bind(null), async () => 1];
  const define = (o, k, v) =>
    Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });

  function prim() {
    const r = rnd();
    if (r < 0.35) return str();
    if (r < 0.7) return num();
    if (r < 0.77) return rnd() < 0.5;
    if (r < 0.83) return null;
    if (r < 0.89) return undefined;
    if (r < 0.95) return pick(FUNCS);
    return Symbol("s");
  }
  function obj(d) {
    const kind = rnd();
    const o = kind < 0.08 ? Object.create(null) : kind < 0.14 ? Object.create(PROTO)
      : kind < 0.2 ? new Point(num(), str()) : {};
    const n = Math.floor(rnd() * 7);
    for (let i = 0; i < n; i++) {
      const k = key();
      if (k === "__proto__" || rnd() < 0.1) define(o, k, gen(d + 1));
      else o[k] = gen(d + 1);
    }
    if (rnd() < 0.1) Object.defineProperty(o, "hidden", { value: gen(d + 1), enumerable: false });
    if (rnd() < 0.1) o[Symbol("k")] = gen(d + 1);
    if (rnd() < 0.08) { o.gone = 1; o.kept = 2; delete o.gone; }
    if (rnd() < 0.05) { const ks = Object.keys(o); if (ks.length) delete o[ks[0]]; }
    return o;
  }
  function arr(d) {
    const a = [];
    const n = Math.floor(rnd() * 7);
    for (let i = 0; i < n; i++) a.push(gen(d + 1));
    const r = rnd();
    if (r < 0.05) a.length += 2;                        // holes at the end
    else if (r < 0.09) a[a.length + 1] = gen(d + 1);    // a hole inside
    else if (r < 0.12 && a.length) delete a[0];
    else if (r < 0.15) a.extra = gen(d + 1);            // a named property on an array
    else if (r < 0.17) return new Array(3);
    else if (r < 0.19) return Array.from({ length: 3 }, () => gen(d + 1));
    return a;
  }
  function special(d) {
    switch (Math.floor(rnd() * 25)) {
      case 0: return new Date(86400000 * Math.floor(rnd() * 20000));
      case 1: return new Number(num());
      case 2: return new String(str());
      case 3: return new Boolean(rnd() < 0.5);
      case 4: return Object(Symbol("boxed"));
      case 5: return { toJSON() { return [1, "t", gen(d + 1)]; } };
      case 6: return { toJSON: (k) => "key:" + k };
      case 7: return { get g() { return gen(d + 1); }, a: 1 };
      case 8: return new Proxy({ a: 1, b: [2, gen(d + 1)] }, {});
      case 9: return new Proxy([1, gen(d + 1)], {});
      case 10: return new Uint8Array([1, 2, 250]);
      case 11: return new Map([[1, 2]]);
      case 12: return /re/g;
      case 13: return new Error("e");
      case 14: return Object.assign(Object.create({ toJSON() { return "inherited"; } }), { a: 1 });
      case 15: return new Stamp(gen(d + 1));
      case 16: return (function () { return arguments; })(1, "a", gen(d + 1));
      case 17: return Object.assign(Object.create(Object.create(PROTO)), { deep: gen(d + 1) });
      case 18: return Object.setPrototypeOf([1, 2, gen(d + 1)], Object.create(Array.prototype));
      case 19: return Object.setPrototypeOf({ a: 1 }, new Proxy({}, {}));
      case 20: return Object.setPrototypeOf({ a: 1 }, [5]);
      case 21: return Object.freeze({ frozen: gen(d + 1), n: [1] });
      case 23: return { n: [1, 10n] };
      case 22: { const o = {}; for (let i = 0; i < 40; i++) o["k" + i] = i % 3 ? i : str(); return o; }
      default: { const o = { b: 1, a: 2 }; o[3] = "three"; o.c = 4; return o; }
    }
  }
  function gen(d) {
    const r = rnd();
    if (d > 6 || r < 0.4) return prim();
    if (r < 0.68) return obj(d);
    if (r < 0.94) return arr(d);
    return special(d);
  }
  const SPACES = [0, 1, 2, 10, 11, -1, 3.7, NaN, "", "\t", "--", "abcdefghijkl", "\u00e9\u00e9", "\ud83d\ude00",
    "a".repeat(3) + "b", null, true, new Number(2), new String(" *")];
  const REPLACERS = [(k, v) => (typeof v === "number" ? v + 1 : v), ["a", "b", "0", 1, "id"], {}, 0, "x"];
  const out = [];
  for (let i = 0; i < count; i++) {
    const value = gen(0);
    const space = rnd() < 0.2 ? pick(SPACES) : undefined;
    const replacer = rnd() < 0.04 ? pick(REPLACERS) : rnd() < 0.5 ? null : undefined;
    try {
      const text = JSON.stringify(value, replacer, space);
      out.push(text === undefined ? "<undefined>" : text);
    } catch (e) {
      out.push("<throw " + e.name + ">");
    }
  }
  return out;
}
"""

SURPRISES = r"""
function surprises() {
  const out = {};
  const messages = {};
  const attempt = (name, f) => {
    try { const t = f(); out[name] = t === undefined ? "<undefined>" : t; }
    catch (e) { out[name] = "<throw " + e.name + ">"; messages[name] = e.message; }
  };
  const big = Array.from({ length: 4000 }, (_, i) => ({ i, s: "v" + i, f: i / 7, t: [i, "x"] }));
  const plain = { a: { b: [1, { c: "d" }] }, e: [[], {}], f: () => 1 };

  let calls = 0;
  const late = { get() { calls++; return { deep: [1, calls] }; }, enumerable: true, configurable: true };
  Object.defineProperty(big[3999], "late", late);
  attempt("lateGetter", () => JSON.stringify(big));
  out.lateGetterCalls = calls;
  Object.defineProperty(big[3999], "late", { value: 1, enumerable: false });

  let seen = [];
  big[3998].inner = { z: { toJSON(k) { seen.push(k); return "tj"; } } };
  attempt("lateToJSON", () => JSON.stringify(big, null, 1));
  out.lateToJSONKeys = seen;
  delete big[3998].inner;

  attempt("beforePrototypes", () => JSON.stringify(plain));
  Object.prototype.toJSON = function (k) { return "O(" + k + ")"; };
  attempt("objectPrototype", () => JSON.stringify(plain));
  attempt("objectPrototypeArray", () => JSON.stringify([1, {}, []]));
  delete Object.prototype.toJSON;
  Array.prototype.toJSON = function (k) { return "A" + this.length + k; };
  attempt("arrayPrototype", () => JSON.stringify(plain));
  delete Array.prototype.toJSON;
  Function.prototype.toJSON = function (k) { return "F" + k; };
  attempt("functionPrototype", () => JSON.stringify(plain));
  delete Function.prototype.toJSON;
  let getterCalls = 0;
  Object.defineProperty(Object.prototype, "toJSON", { get() { getterCalls++; return undefined; }, configurable: true });
  attempt("objectPrototypeGetter", () => JSON.stringify(big.slice(0, 50)));
  out.objectPrototypeGetterCalls = getterCalls;
  delete Object.prototype.toJSON;
  Point.prototype.toJSON = function () { return "P"; };
  attempt("classPrototype", () => JSON.stringify([new Point(), { p: new Point() }]));
  delete Point.prototype.toJSON;
  attempt("classInstances", () => JSON.stringify([new Point(), { p: new Point() }]));
  Object.setPrototypeOf(Array.prototype, { toJSON() { return "swapped"; } });
  attempt("arrayPrototypeSwapped", () => JSON.stringify({ a: [1], b: {} }));
  Object.setPrototypeOf(Array.prototype, Object.prototype);
  Array.prototype[1] = "from the prototype";
  attempt("holeFromPrototype", () => JSON.stringify([0, , 2, [5, 6]]));
  const grown = [0];
  grown.length = 3;
  attempt("holeAtEndFromPrototype", () => JSON.stringify(grown));
  delete Array.prototype[1];
  attempt("afterPrototypes", () => JSON.stringify(plain));

  const cyclic = { a: [1, { b: null }] };
  cyclic.a[1].b = cyclic;
  attempt("cycle", () => JSON.stringify(cyclic));
  const selfArray = [];
  selfArray.push([selfArray]);
  attempt("cycleArray", () => JSON.stringify(selfArray));
  big[3999].back = big;
  attempt("cycleAtTheEnd", () => JSON.stringify(big));
  attempt("cycleAtTheEndIndented", () => JSON.stringify(big, null, 2));
  delete big[3999].back;
  const shared = { x: 1 };
  attempt("sharedNotCycle", () => JSON.stringify({ a: shared, b: [shared, shared] }));
  attempt("bigint", () => JSON.stringify({ a: [1, 2n] }));
  attempt("bigintTop", () => JSON.stringify(5n));
  attempt("throwingGetter", () => JSON.stringify({ a: 1, get b() { throw new RangeError("no"); } }));
  let trapped = 0;
  const traced = new Proxy({ a: 1, b: { c: 2 } }, { get(t, k, r) { trapped++; return Reflect.get(t, k, r); } });
  attempt("proxyTraps", () => JSON.stringify([big.slice(0, 100), traced]));
  out.proxyTrapCalls = trapped;

  for (const depth of [100, 511, 512, 513, 600, 1000]) {
    let v = "leaf";
    for (let i = 0; i < depth; i++) v = i % 2 ? [v, i] : { k: v };
    attempt("depth" + depth, () => JSON.stringify(v));
    if (depth <= 600) attempt("depthIndented" + depth, () => JSON.stringify(v, null, 1));
  }
  const tops = [undefined, () => 1, Symbol("t"), "top\u2028\ud800", -0, NaN, 1e21, true, null, [], {}];
  tops.forEach((v, i) => attempt("top" + i, () => JSON.stringify(v)));
  attempt("noArguments", () => JSON.stringify());
  attempt("extraArguments", () => JSON.stringify({ a: [1] }, undefined, 2, "extra"));
  attempt("calledOnOtherThis", () => JSON.stringify.call(null, { a: 1 }));
  attempt("wide", () => JSON.stringify({ "\u65e5": "\u672c", x: "\ud83d\ude00", "\u0100": ["\u00e9"] }));
  attempt("wideOmitted", () => JSON.stringify({ a: 1, "\u65e5": undefined, b: 2 }));
  attempt("manyKeys", () => JSON.stringify(Object.fromEntries(Array.from({ length: 300 }, (_, i) => ["k" + i, i]))));
  attempt("longString", () => JSON.stringify(["x".repeat(100000) + "\n" + "\u65e5".repeat(50000)]).length);
  return { out, messages };
}
"""

DOUBLES = r"""
function doubles() {
  let seed = 99;
  const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296;
  const view = new DataView(new ArrayBuffer(8));
  const values = [1e-5, 1e-6, 0.00001, 0.000015, 9.999999999999999e-6, 1.0000000000000001e-5, 2 ** 52 + 0.5,
    2 ** 53 - 1, 2 ** 53, 2 ** 53 + 2, 0.1, 0.2, 0.3, 0.1 + 0.2, 1 / 3, 2 / 3, 4.35, 0.5, 0.25, 1.5, 2 ** -17,
    2 ** -16, 1 - 2 ** -53, 1 + 2 ** -52, 2 - 2 ** -51, 1.7976931348623157e308, 5e-324, 123456.789e-3];
  for (let i = 0; i < 8000; i++) {
    view.setUint32(0, (rnd() * 4294967296) >>> 0);
    view.setUint32(4, (rnd() * 4294967296) >>> 0);
    const bits = view.getFloat64(0);
    values.push(bits, bits * 1e-300, rnd() * 1000, i / 7, Math.round(rnd() * 1e6) / 100,
      -(Math.round(rnd() * 1e9) / 1e4), rnd() * 1e-4, (rnd() - 0.5) * 2 ** 53, 2 ** (Math.floor(rnd() * 70) - 17),
      Math.floor(rnd() * 2 ** 53) / 2 ** Math.floor(rnd() * 70));
  }
  const finite = values.filter(Number.isFinite);
  const text = JSON.stringify(finite);
  // The engine's own Number-to-string (js_dtoa) must agree on every one.
  const unlike = finite.filter((x) => JSON.stringify(x) !== String(x)).map(String);
  return { text, unlike, count: finite.length };
}
"""

POINT = "class Point { constructor() { this.x = 1; this.y = [2]; } norm() { return 1; } }\n"


def _node(source: str, call: str, tmp_path) -> object:
    script = tmp_path / "stringify.cjs"
    script.write_text(source + f"process.stdout.write(JSON.stringify({call}));\n")
    proc = subprocess.run([NODE, str(script)], capture_output=True, text=True, check=True, timeout=120)
    return json.loads(proc.stdout)


def _ours(make_agent, source: str, call: str) -> object:
    return run_captured(make_agent({"main.js": source + f"export default () => {call};"})).result.value


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_generated_values_give_what_node_gives(make_agent, tmp_path):
    count = 4000
    ours = _ours(make_agent, GENERATED, f"generated({count})")
    theirs = _node(GENERATED, f"generated({count})", tmp_path)
    assert len(ours) == len(theirs) == count
    mismatches = [(i, a, b) for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) if a != b]
    assert not mismatches, f"{len(mismatches)} differ: {mismatches[:3]}"
    # The generator reaches both paths and every outcome, not just one.
    assert sum(text.startswith("<throw") for text in ours) >= 5  # BigInt (a TypeError in both)
    assert sum(text == "<undefined>" for text in ours) >= 20
    assert sum(len(text) > 200 for text in ours) >= 500
    assert sum("\\ud800" in text for text in ours) >= 50
    assert sum("\n" in text for text in ours) >= 150  # indented


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_late_surprises_restart_as_if_never_started(make_agent, tmp_path):
    source = POINT + SURPRISES
    ours = _ours(make_agent, source, "surprises()")
    theirs = _node(source, "surprises()", tmp_path)
    assert ours["out"] == theirs["out"]
    out = ours["out"]
    assert out["lateGetterCalls"] == 1
    assert out["lateToJSONKeys"] == ["z"]
    assert out["objectPrototypeGetterCalls"] == 50 * 2 + 1  # each object, its array, the array holding them
    assert out["objectPrototype"] == '"O()"'
    assert out["proxyTrapCalls"] > 0
    assert out["depth1000"].startswith('[{"k":[{"k":[')
    assert out["beforePrototypes"] == out["afterPrototypes"] == '{"a":{"b":[1,{"c":"d"}]},"e":[[],{}]}'
    # Node words these errors its own way; the messages are the engine's from before the fast path.
    assert ours["messages"] == {
        "cycle": CIRCULAR,
        "cycleArray": CIRCULAR,
        "cycleAtTheEnd": CIRCULAR,
        "cycleAtTheEndIndented": CIRCULAR,
        "bigint": BIGINT,
        "bigintTop": BIGINT,
        "throwingGetter": "no",
    }
    assert {name: out[name] for name in ours["messages"]} == {
        **{name: "<throw TypeError>" for name in ours["messages"] if name != "throwingGetter"},
        "throwingGetter": "<throw RangeError>",
    }


def test_stringify_keeps_the_builtin_shape(make_agent):
    probe = (
        "export default () => {"
        " const d = Object.getOwnPropertyDescriptor(JSON, 'stringify');"
        " let constructs = true; try { new JSON.stringify({}); } catch (e) { constructs = e.name; }"
        " return [JSON.stringify.name, JSON.stringify.length, d.writable, d.enumerable, d.configurable,"
        " constructs, Object.getPrototypeOf(JSON.stringify) === Function.prototype,"
        " 'prototype' in JSON.stringify]; };"
    )
    got = run_captured(make_agent({"main.js": probe})).result.value
    assert got == ["stringify", 3, True, False, True, "TypeError", True, False]


OUT_OF_MEMORY = r"""
export default () => {
  const row = Array.from({ length: 2000 }, (_, i) => ({ k: "x".repeat(200) + i, n: i }));
  const big = Array.from({ length: 400 }, () => row);  // ~170 MB of text, past the cap
  let caught;
  try { JSON.stringify(big); } catch (e) { caught = e.name + ": " + e.message; }
  return [caught, JSON.stringify(row.slice(0, 2)).length];  // and the engine carries on
};
"""


def test_text_past_the_memory_cap_is_a_catchable_error(make_agent):
    agent = make_agent({"main.js": OUT_OF_MEMORY}, permissions={"limits": {"memory_mb": 64}})
    # What the engine before the fast path gave too.
    assert run_captured(agent).result.value == ["InternalError: out of memory", 433]


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_doubles_print_as_the_engine_and_node_print_them(make_agent, tmp_path):
    ours = _ours(make_agent, DOUBLES, "doubles()")
    theirs = _node(DOUBLES, "doubles()", tmp_path)
    assert ours["count"] == theirs["count"] > 75000
    assert ours["unlike"] == []
    assert ours["text"] == theirs["text"]
