// structuredClone cases from web-platform-tests
// (html/webappapis/structured-clone/structured-clone-battery-of-tests*.js as
// run by structured-clone.any.js), through wpt_steps.mjs. Values and checks
// are described in wpt/structured_clone.json (DATA); the cases that are
// behaviours are written out below under WPT's names.
const P = "structured_clone.";
const clone = async (value, transfer) => structuredClone(value, { transfer });

// A value described in the data.
function value(spec) {
  if (spec === null || typeof spec !== "object") return spec;
  switch (spec.$) {
    case "undefined": return undefined;
    case "num": return Number(spec.v);
    case "bigint": return BigInt(spec.v);
    case "Boolean": return new Boolean(spec.v);
    case "String": return new String(spec.v);
    case "Number": return new Number(Number(spec.v));
    case "BigIntObject": return Object(BigInt(spec.v));
    case "Date": return new Date(Number(spec.v));
    case "RegExp": {
      const r = new RegExp(spec.source, spec.flags);
      r.lastIndex = spec.lastIndex;
      return r;
    }
    case "Error": {
      const Ctor = globalThis[spec.ctor];
      const e = "message" in spec ? new Ctor(spec.message) : new Ctor();
      if ("foo" in spec) e.foo = spec.foo;
      return e;
    }
    case "Blob": return new Blob(spec.bytes ? [new DataView(new Uint8Array(spec.bytes).buffer)] : spec.parts, spec.type ? { type: spec.type } : undefined);
    case "File": return new File(spec.parts, spec.name, { type: spec.type, lastModified: spec.lastModified });
    case "array": return spec.items.map(value);
    case "sparse": return new Array(spec.length);
    case "object": return Object.fromEntries(Object.entries(spec.props).map(([k, v]) => [k, value(v)]));
  }
  throw new Error(`unknown value ${JSON.stringify(spec)}`);
}

async function bytesOf(blob) {
  return new Uint8Array(await new Response(blob).arrayBuffer());
}

// WPT's compare_* functions, by the name the data gives them.
function comparer(spec) {
  if (Array.isArray(spec)) {
    const [kind, inner] = spec;
    if (kind === "RegExp") return compareRegExp(inner);
    const each = comparer(inner);
    return async (actual, input) => {
      if (typeof actual === "string") fail(actual);
      if (kind === "Array") {
        yes(actual instanceof Array, "instanceof Array");
        ne(actual, input);
        eq(actual.length, input.length, "length");
      } else {
        yes(actual instanceof Object, "instanceof Object");
        no(actual instanceof Array, "instanceof Array");
        ne(actual, input);
      }
      for (const x in input) await each(actual[x], input[x]);
    };
  }
  return COMPARE[spec];
}
const wrapper = (Type) => (actual, input) => {
  if (typeof actual === "string") fail(actual);
  yes(actual instanceof Type, `instanceof ${Type.name}`);
  eq(Type(actual), Type(input), "converted to primitive");
  ne(actual, input);
};
const compareRegExp = (source) => (actual, input) => {
  if (typeof actual === "string") fail(actual);
  yes(actual instanceof RegExp, "instanceof RegExp");
  for (const flag of ["global", "ignoreCase", "multiline", "sticky", "unicode"]) eq(actual[flag], input[flag], flag);
  eq(actual.source, source, "source");
  eq(actual.lastIndex, 0, "lastIndex");
  ne(actual, input);
};
async function compareBlob(actual, input, expectFile = false) {
  if (typeof actual === "string") fail(actual);
  yes(actual instanceof Blob, "instanceof Blob");
  if (!expectFile) no(actual instanceof File, "instanceof File");
  eq(actual.size, input.size, "size");
  eq(actual.type, input.type, "type");
  ne(actual, input);
  arrEq(await bytesOf(actual), await bytesOf(input), "bytes");
}
const COMPARE = {
  primitive: (actual, input) => eq(actual, input),
  Boolean: (actual, input) => {
    if (typeof actual === "string") fail(actual);
    yes(actual instanceof Boolean, "instanceof Boolean");
    eq(String(actual), String(input));
    ne(actual, input);
  },
  String: wrapper(String),
  Number: wrapper(Number),
  BigInt: wrapper(BigInt),
  Date: (actual, input) => {
    if (typeof actual === "string") fail(actual);
    yes(actual instanceof Date, "instanceof Date");
    eq(Number(actual), Number(input));
    ne(actual, input);
  },
  Error: (actual, input) => {
    yes(actual instanceof Error, "instanceof");
    eq(actual.constructor, input.constructor, "constructor");
    eq(actual.name, input.name, "name");
    eq(Object.hasOwn(actual, "message"), Object.hasOwn(input, "message"), "message existence");
    eq(actual.message, input.message, "message");
    eq(actual.foo, undefined, "custom property");
  },
  Blob: (actual, input) => compareBlob(actual, input),
  File: async (actual, input) => {
    yes(actual instanceof File, "instanceof File");
    eq(actual.name, input.name, "name");
    eq(actual.lastModified, input.lastModified, "lastModified");
    await compareBlob(actual, input, true);
  },
};

for (const [name, spec, cmp] of DATA.cases) {
  check(P + name, async () => {
    const input = value(spec);
    await comparer(cmp)(await clone(input), input);
  });
}

const asObject = (actual, input) => {
  if (typeof actual === "string") fail(actual);
  yes(actual instanceof Object, "instanceof Object");
  no(actual instanceof Array, "instanceof Array");
  ne(actual, input);
};
const asArray = (actual, input) => {
  if (typeof actual === "string") fail(actual);
  yes(actual instanceof Array, "instanceof Array");
  ne(actual, input);
  eq(actual.length, input.length, "length");
};
const resizable = () => {
  const ab = new ArrayBuffer(16, { maxByteLength: 1024 });
  yes(ab.resizable, "resizable");
  return ab;
};
const sameBuffer = (actual, input) => {
  yes(actual instanceof ArrayBuffer, "instanceof ArrayBuffer");
  for (const k of ["byteLength", "maxByteLength", "resizable", "growable"]) eq(actual[k], input[k], k);
};
const sameView = (Type) => (actual, input) => {
  yes(actual instanceof Type, `instanceof ${Type.name}`);
  for (const k of ["length", "byteLength", "byteOffset"]) eq(actual[k], input[k], k);
  ne(actual.buffer, input.buffer, "buffer");
  for (let i = 0; i < actual.length; ++i) eq(actual[i], input[i], `[${i}]`);
};
const cloneFails = (input) => rejects(clone(input), (e) => yes(e instanceof DOMException && e.name === "DataCloneError", String(e)));

const STEPS = {
  "Array with non-index property": async () => {
    const input = [];
    input.foo = "bar";
    const copy = await clone(input);
    asArray(copy, input);
    for (const x in input) eq(copy[x], input[x], x);
  },
  "Array with circular reference": async () => {
    const input = [];
    input[0] = input;
    const copy = await clone(input);
    asArray(copy, input);
    eq(copy[0], copy);
  },
  "Object with circular reference": async () => {
    const input = {};
    input.x = input;
    const copy = await clone(input);
    asObject(copy, input);
    eq(copy.x, copy);
  },
  "Array with identical property values": async () => {
    const obj = {};
    const input = [obj, obj];
    const copy = await clone(input);
    asArray(copy, input);
    eq(copy[0], copy[1]);
  },
  "Object with identical property values": async () => {
    const obj = {};
    const input = { x: obj, y: obj };
    const copy = await clone(input);
    asObject(copy, input);
    eq(copy.x, copy.y);
  },
  "Object with property on prototype": async () => {
    const Foo = function () {};
    Foo.prototype = { foo: "bar" };
    const input = new Foo();
    const copy = await clone(input);
    asObject(copy, input);
    no("foo" in copy);
  },
  "Object with non-enumerable property": async () => {
    const input = {};
    Object.defineProperty(input, "foo", { value: "bar", enumerable: false, writable: true, configurable: true });
    const copy = await clone(input);
    asObject(copy, input);
    no("foo" in copy);
  },
  "Object with non-writable property": async () => {
    const input = {};
    Object.defineProperty(input, "foo", { value: "bar", enumerable: true, writable: false, configurable: true });
    const copy = await clone(input);
    asObject(copy, input);
    eq(copy.foo, input.foo);
    copy.foo += " baz";
    eq(copy.foo, input.foo + " baz");
  },
  "Object with non-configurable property": async () => {
    const input = {};
    Object.defineProperty(input, "foo", { value: "bar", enumerable: true, writable: true, configurable: false });
    const copy = await clone(input);
    asObject(copy, input);
    eq(copy.foo, input.foo);
    delete copy.foo;
    no("foo" in copy);
  },
  "Object with a getter that throws": async () => {
    const exception = new Error();
    await rejects(clone({ get testProperty() { throw exception; } }), (e) => eq(e, exception));
  },
  "ObjectPrototype must lose its exotic-ness when cloned": async () => {
    const copy = await clone(Object.prototype);
    ne(copy, Object.prototype);
    yes(copy instanceof Object);
    const proto = { some: "proto" };
    Object.setPrototypeOf(copy, proto);
    eq(Object.getPrototypeOf(copy), proto);
  },
  "Serializing a non-serializable platform object fails": () => cloneFails(new Response()),
  "An object whose interface is deleted from the global must still deserialize": async () => {
    const blob = new Blob();
    const Saved = globalThis.Blob;
    delete globalThis.Blob;
    try {
      yes((await clone(blob)) instanceof Saved);
    } finally {
      globalThis.Blob = Saved;
    }
  },
  "A subclass instance will deserialize as its closest serializable superclass": async () => {
    class FileSubclass extends File {}
    const copy = await clone(new FileSubclass([], ""));
    eq(Object.getPrototypeOf(copy), File.prototype);
  },
  "Resizable ArrayBuffer": async () => {
    const input = resizable();
    sameBuffer(await clone(input), input);
  },
  "Growable SharedArrayBuffer": async () => {
    // Without cross-origin isolation (node has no such notion) a DataCloneError is also a pass.
    if (typeof SharedArrayBuffer !== "function") fail("no SharedArrayBuffer");
    const input = new SharedArrayBuffer(16, { maxByteLength: 1024 });
    yes(input.growable, "growable");
    try {
      sameBuffer(input, await clone(input)); // WPT's argument order
    } catch (e) {
      if (!(e instanceof DOMException && e.code === DOMException.DATA_CLONE_ERR) || globalThis.crossOriginIsolated) throw e;
    }
  },
  "Length-tracking TypedArray": async () => {
    const input = new Uint8Array(resizable());
    sameView(Uint8Array)(await clone(input), input);
  },
  "Length-tracking DataView": async () => {
    const input = new DataView(resizable());
    sameView(DataView)(await clone(input), input);
  },
  "Serializing OOB TypedArray throws": () => {
    const ab = resizable();
    const ta = new Uint8Array(ab, 8);
    ab.resize(0);
    return cloneFails(ta);
  },
  "Serializing OOB DataView throws": () => {
    const ab = resizable();
    const dv = new DataView(ab, 8);
    ab.resize(0);
    return cloneFails(dv);
  },
  ArrayBuffer: async () => {
    const buffer = new Uint8Array([1]).buffer;
    const copy = await clone(buffer, [buffer]);
    eq(buffer.byteLength, 0);
    eq(copy.byteLength, 1);
  },
  MessagePort: async () => {
    const { port1, port2 } = new MessageChannel();
    const copy = await clone(port2, [port2]);
    const msg = new Promise((resolve) => (port1.onmessage = resolve));
    copy.postMessage("ohai");
    eq((await msg).data, "ohai");
    port1.close();
  },
};
for (const name of DATA.steps) check(P + name, STEPS[name]);
