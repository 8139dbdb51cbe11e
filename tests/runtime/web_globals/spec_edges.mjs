// Edges of the web globals' specs where hugind used to differ from node:
// TextEncoder and lone surrogates (WHATWG Encoding), HeadersInit's WebIDL
// conversion (Fetch), crypto.getRandomValues, AbortSignal, structuredClone.
// Each line must be the same under node and hugind.
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");
const outcome = (fn) => {
  try {
    const v = fn();
    return typeof v === "string" ? v : JSON.stringify(v);
  } catch (e) {
    return e.constructor.name;
  }
};

// ---- TextEncoder -------------------------------------------------------------------
const enc = new TextEncoder();
const dec = new TextDecoder();
const surrogates = ["\ud800", "\udc00", "a\ud800b", "\udfff\ud800", "\ud83d\ude00", "\ud83d", "x\ude00", "\ud800\ud800\udc00"];
for (const s of surrogates) {
  console.log("encode", JSON.stringify(s), hex(enc.encode(s)));
  const back = dec.decode(enc.encode(s));
  console.log("round trip", JSON.stringify(s), JSON.stringify(back), back.split("\ufffd").length - 1);
  for (const size of [0, 1, 3, 4, 8]) {
    const dest = new Uint8Array(size);
    const r = enc.encodeInto(s, dest);
    console.log("encodeInto", JSON.stringify(s), size, r.read, r.written, hex(dest));
  }
}
const dests = {
  array: () => [0, 0, 0],
  uint16: () => new Uint16Array(4),
  int8: () => new Int8Array(4),
  clamped: () => new Uint8ClampedArray(4),
  buffer: () => new ArrayBuffer(4),
  dataView: () => new DataView(new ArrayBuffer(4)),
  nothing: () => undefined,
  nul: () => null,
  object: () => ({ length: 4 }),
  sub: () => new (class extends Uint8Array {})(4),
};
for (const [name, make] of Object.entries(dests)) {
  console.log("encodeInto dest", name, outcome(() => enc.encodeInto("ab", make())));
}
console.log("encode nothing", hex(enc.encode()), hex(enc.encode(undefined)), hex(enc.encode(null)), hex(enc.encode(12)));

// ---- Headers -----------------------------------------------------------------------
const inits = {
  undefined: () => undefined,
  null: () => null,
  number: () => 1,
  string: () => "ab",
  boolean: () => true,
  symbol: () => Symbol("s"),
  emptyArray: () => [],
  pairs: () => [["A", "1"], ["a", "2"], ["B", "3"]],
  short: () => [["a"]],
  long: () => [["a", "1", "2"]],
  empty: () => [[]],
  stringPair: () => ["ab"],
  numberPair: () => [1],
  nullPair: () => [null],
  setPair: () => [new Set(["a", "1"])],
  iteratorNotCallable: () => ({ [Symbol.iterator]: 1 }),
  iteratorNull: () => ({ [Symbol.iterator]: null, a: "1" }),
  customIterator: () => ({
    *[Symbol.iterator]() {
      yield ["a", "1"];
      yield new Set(["b", "2"]);
    },
  }),
  customIteratorShort: () => ({
    *[Symbol.iterator]() {
      yield ["a"];
    },
  }),
  record: () => ({ b: "2", a: "1", "Content-Type": "text/plain" }),
  symbolKey: () => ({ [Symbol("s")]: "1" }),
  proxy: () => new Proxy({ a: "1" }, {}),
  headers: () => new Headers([["set-cookie", "a=1"], ["set-cookie", "b=2"], ["x", "y"]]),
  map: () => new Map([["a", "1"]]),
  badName: () => ({ "a b": "1" }),
  badValue: () => ({ a: "x\ny" }),
  getters: () => {
    const o = {};
    for (const k of ["b", "a"]) Object.defineProperty(o, k, { get: () => k.toUpperCase(), enumerable: true });
    return o;
  },
};
for (const [name, make] of Object.entries(inits)) {
  console.log("Headers", name, outcome(() => [...new Headers(make())]));
}
console.log("Headers without new", outcome(() => Headers()));
// ---- crypto.getRandomValues ------------------------------------------------------------
const arrays = {
  uint8: () => new Uint8Array(8),
  int32: () => new Int32Array(4),
  bigint64: () => new BigInt64Array(2),
  clamped: () => new Uint8ClampedArray(4),
  float32: () => new Float32Array(4),
  float64: () => new Float64Array(2),
  dataView: () => new DataView(new ArrayBuffer(4)),
  buffer: () => new ArrayBuffer(4),
  array: () => [0, 0],
  nothing: () => undefined,
  exactly65536: () => new Uint8Array(65536),
  over65536: () => new Uint8Array(65537),
  over65536in32: () => new Uint32Array(16385),
  empty: () => new Uint8Array(0),
};
for (const [name, make] of Object.entries(arrays)) {
  console.log("getRandomValues", name, outcome(() => {
    const a = make();
    const r = crypto.getRandomValues(a);
    return [r === a, r.constructor.name, r.length];
  }), outcome(() => { try { crypto.getRandomValues(make()); } catch (e) { return [e.name, e.constructor.name, e.code]; } return "no error"; }));
}
console.log("getRandomValues unbound", outcome(() => { const g = crypto.getRandomValues; g(new Uint8Array(2)); return "ok"; }));

// ---- AbortSignal -----------------------------------------------------------------------
const errorOf = (e) => (e instanceof Error || (typeof DOMException === "function" && e instanceof DOMException) ? [e.name, e.constructor.name, e.message === "" ? "" : "msg"] : e);
{
  const c = new AbortController();
  console.log("abort fresh", c.signal.aborted, c.signal.reason);
  c.abort();
  console.log("abort default reason", JSON.stringify(errorOf(c.signal.reason)));
  c.abort("again");
  console.log("abort twice keeps reason", JSON.stringify(errorOf(c.signal.reason)));
  console.log("throwIfAborted", outcome(() => c.signal.throwIfAborted()));
  const d = new AbortController();
  d.abort(undefined);
  console.log("abort(undefined)", JSON.stringify(errorOf(d.signal.reason)));
  const e = new AbortController();
  e.abort(null);
  console.log("abort(null)", JSON.stringify(e.signal.reason));
  console.log("AbortSignal.abort()", JSON.stringify(errorOf(AbortSignal.abort().reason)), AbortSignal.abort(5).reason);
  const any = AbortSignal.any([new AbortController().signal, AbortSignal.abort("first")]);
  console.log("AbortSignal.any", any.aborted, any.reason);
  console.log("new AbortSignal", outcome(() => new AbortSignal()));
  console.log("AbortSignal.timeout bad", outcome(() => AbortSignal.timeout(-1)), outcome(() => AbortSignal.timeout("x")));
  let fired = 0;
  const f = new AbortController();
  f.signal.onabort = () => fired++;
  f.signal.addEventListener("abort", (ev) => console.log("abort event", ev.type, ev.isTrusted === false || ev.isTrusted === true));
  f.abort();
  f.abort();
  console.log("onabort fired", fired);
}

// ---- structuredClone -------------------------------------------------------------------
const cloneCases = {
  nested: () => ({ a: [1, { b: 2n }], d: new Date(0), r: /x/gi, m: new Map([[1, new Set([2])]]) }),
  cycle: () => { const o = { n: 1 }; o.self = o; return o; },
  errors: () => [new RangeError("r"), new TypeError("t"), new Error("e", { cause: 1 })],
  typed: () => [new Uint16Array([1, 2]), new DataView(new ArrayBuffer(2)), new ArrayBuffer(3)],
  boxed: () => [Object(1), Object("s"), Object(false), Object(3n)],
  sparse: () => [1, , 3],
  negativeZero: () => [-0, NaN, Infinity],
  fn: () => () => 1,
  symbol: () => Symbol("s"),
  symbolInObject: () => ({ s: Symbol("s") }),
  weakMap: () => new WeakMap(),
  promise: () => Promise.resolve(1),
  getter: () => ({ get x() { return 7; } }),
  classInstance: () => new (class P { constructor() { this.q = 1; } })(),
};
for (const [name, make] of Object.entries(cloneCases)) {
  console.log("structuredClone", name, outcome(() => {
    try {
      const v = structuredClone(make());
      const describe = (x) => x === null || typeof x !== "object" ? String(x) + ":" + typeof x : Object.prototype.toString.call(x) + ":" + Object.keys(x).join("/");
      if (Array.isArray(v)) return v.map((x) => (Object.is(x, -0) ? "-0" : x instanceof Error ? [x.name, x.message, x.cause] : describe(x)));
      if (v && v.self) return [v.self === v, v.n];
      if (v && v.m) return [v.a[1].b === 2n, v.d.getTime(), v.r.flags, v.m.get(1).has(2)];
      return describe(v);
    } catch (e) {
      return [e.name, e.constructor.name];
    }
  }));
}
console.log("structuredClone()", outcome(() => { try { structuredClone(); } catch (e) { return e.constructor.name; } }));

console.log("done");
