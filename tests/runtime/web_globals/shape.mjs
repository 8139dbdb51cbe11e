// The shape of every global: for each property on globalThis, on each global
// object or function, and on each constructor's prototype, one JSON line with
// its attributes and, for a function, its name, length, whether it can be
// constructed and whether it is native code. Run under node and under hugind;
// the Python side decides which lines hugind installed and compares those.
const isConstructor = (f) => {
  try {
    Reflect.construct(String, [], f);
    return true;
  } catch {
    return false;
  }
};
const nativeCode = (f) => {
  try {
    return /\{\s*\[native code\]\s*\}\s*$/.test(Function.prototype.toString.call(f));
  } catch {
    return false;
  }
};
const keyName = (k) => (typeof k === "symbol" ? `[${k.description}]` : k);
function describeValue(v) {
  if (typeof v !== "function") return { type: v === null ? "null" : typeof v };
  const own = Object.getOwnPropertyNames(v);
  return {
    type: "function",
    name: v.name,
    length: v.length,
    constructor: isConstructor(v),
    ownPrototype: own.includes("prototype"),
    native: nativeCode(v),
  };
}

const rows = [];
const seen = new Set();
function walk(obj, path, depth) {
  if (obj === null || (typeof obj !== "object" && typeof obj !== "function") || seen.has(obj)) return;
  seen.add(obj);
  const keys = Reflect.ownKeys(obj).sort((a, b) => (keyName(a) < keyName(b) ? -1 : keyName(a) > keyName(b) ? 1 : 0));
  for (const key of keys) {
    const d = Object.getOwnPropertyDescriptor(obj, key);
    const p = `${path}.${keyName(key)}`;
    const row = { path: p, enumerable: d.enumerable, configurable: d.configurable };
    if ("value" in d) {
      row.writable = d.writable;
      row.value = describeValue(d.value);
    } else {
      row.get = d.get === undefined ? null : describeValue(d.get);
      row.set = d.set === undefined ? null : describeValue(d.set);
      if (obj === globalThis) row.resolved = describeValue(globalThis[key]);
    }
    rows.push(row);
    // node defines many globals as lazy accessors: walk what they return.
    const v = "value" in d ? d.value : obj === globalThis ? globalThis[key] : undefined;
    if (depth > 0 && key !== "constructor" && key !== "globalThis") {
      // Into namespaces (Intl, crypto, console), constructors and their prototypes.
      if (typeof v === "function" || (typeof v === "object" && v !== null && !Array.isArray(v))) walk(v, p, depth - 1);
    }
  }
}
walk(globalThis, "globalThis", 3);
for (const row of rows) console.log(JSON.stringify(row));
console.log("done");
