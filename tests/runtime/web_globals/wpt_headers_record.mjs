// headers-record's checks (after wpt_headers.mjs, in the same script): the
// order of the proxy traps the Headers constructor sets off on a record.
// Then every case of the suite runs.

// A proxy handler that logs every trap, as WPT's does.
let log = [];
const logging = {};
for (const trap of Object.getOwnPropertyNames(Reflect)) {
  logging[trap] = (...args) => {
    log.push([trap, ...args]);
    return Reflect[trap](...args);
  };
}
function withLog(fn) {
  log = [];
  try {
    fn();
  } finally {
    log = [];
  }
}
const logIs = (i, expected) => arrEq(log[i], expected, `log[${i}]`);

CHECKS["headers-record"] = {
  "Passing nothing to Headers constructor": () => eq([...H()].length, 0),
  "Passing undefined to Headers constructor": () => eq([...H(undefined)].length, 0),
  "Passing null to Headers constructor": () => throwsJs(TypeError, () => H(null)),
  "Basic operation with one property": () =>
    withLog(() => {
      const record = { a: "b" };
      const proxy = new Proxy(record, logging);
      const h = H(proxy);
      eq(log.length, 4);
      logIs(0, ["get", record, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", record]);
      logIs(2, ["getOwnPropertyDescriptor", record, "a"]);
      logIs(3, ["get", record, "a", proxy]);
      eq([...h].length, 1);
      arrEq([...h.keys()], ["a"]);
      yes(h.has("a"));
      eq(h.get("a"), "b");
    }),
  "Basic operation with one property and a proto": () =>
    withLog(() => {
      const record = Object.create({ c: "d" }, { a: { value: "b", enumerable: true } });
      const proxy = new Proxy(record, logging);
      const h = H(proxy);
      eq(log.length, 4);
      logIs(0, ["get", record, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", record]);
      logIs(2, ["getOwnPropertyDescriptor", record, "a"]);
      logIs(3, ["get", record, "a", proxy]);
      eq([...h].length, 1);
      arrEq([...h.keys()], ["a"]);
      yes(h.has("a"));
      eq(h.get("a"), "b");
    }),
  "Correct operation ordering with two properties": () =>
    withLog(() => {
      const record = { a: "b", c: "d" };
      const proxy = new Proxy(record, logging);
      const h = H(proxy);
      eq(log.length, 6);
      logIs(0, ["get", record, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", record]);
      logIs(2, ["getOwnPropertyDescriptor", record, "a"]);
      logIs(3, ["get", record, "a", proxy]);
      logIs(4, ["getOwnPropertyDescriptor", record, "c"]);
      logIs(5, ["get", record, "c", proxy]);
      eq([...h].length, 2);
      arrEq([...h.keys()], ["a", "c"]);
      yes(h.has("a"));
      eq(h.get("a"), "b");
      yes(h.has("c"));
      eq(h.get("c"), "d");
    }),
  "Correct operation ordering with two properties one of which has an invalid name": () =>
    withLog(() => {
      const record = { a: "b", "\uFFFF": "d" };
      const proxy = new Proxy(record, logging);
      throwsJs(TypeError, () => H(proxy));
      eq(log.length, 5);
      logIs(0, ["get", record, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", record]);
      logIs(2, ["getOwnPropertyDescriptor", record, "a"]);
      logIs(3, ["get", record, "a", proxy]);
      logIs(4, ["getOwnPropertyDescriptor", record, "\uFFFF"]);
    }),
  "Correct operation ordering with two properties one of which has an invalid value": () =>
    withLog(() => {
      const record = { a: "\uFFFF", c: "d" };
      const proxy = new Proxy(record, logging);
      throwsJs(TypeError, () => H(proxy));
      eq(log.length, 4);
      logIs(0, ["get", record, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", record]);
      logIs(2, ["getOwnPropertyDescriptor", record, "a"]);
      logIs(3, ["get", record, "a", proxy]);
    }),
  "Correct operation ordering with non-enumerable properties": () =>
    withLog(() => {
      const record = {};
      Object.defineProperty(record, "a", { value: "b", enumerable: false });
      Object.defineProperty(record, "c", { value: "d", enumerable: true });
      Object.defineProperty(record, "e", { value: "f", enumerable: false });
      const proxy = new Proxy(record, logging);
      const h = H(proxy);
      eq(log.length, 6);
      logIs(0, ["get", record, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", record]);
      logIs(2, ["getOwnPropertyDescriptor", record, "a"]);
      logIs(3, ["getOwnPropertyDescriptor", record, "c"]);
      logIs(4, ["get", record, "c", proxy]);
      logIs(5, ["getOwnPropertyDescriptor", record, "e"]);
      eq([...h].length, 1);
      arrEq([...h.keys()], ["c"]);
      yes(h.has("c"));
      eq(h.get("c"), "d");
    }),
  "Correct operation ordering with undefined descriptors": () =>
    withLog(() => {
      const record = { a: "b", c: "d", e: "f" };
      const lying = new Proxy(record, {
        getOwnPropertyDescriptor: (target, name) =>
          name == "a" || name == "e" ? undefined : Reflect.getOwnPropertyDescriptor(target, name),
      });
      const proxy = new Proxy(lying, logging);
      const h = H(proxy);
      eq(log.length, 6);
      logIs(0, ["get", lying, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", lying]);
      logIs(2, ["getOwnPropertyDescriptor", lying, "a"]);
      logIs(3, ["getOwnPropertyDescriptor", lying, "c"]);
      logIs(4, ["get", lying, "c", proxy]);
      logIs(5, ["getOwnPropertyDescriptor", lying, "e"]);
      eq([...h].length, 1);
      arrEq([...h.keys()], ["c"]);
      yes(h.has("c"));
      eq(h.get("c"), "d");
    }),
  "Correct operation ordering with repeated keys": () =>
    withLog(() => {
      const lying = new Proxy({ a: "b", c: "d" }, { ownKeys: () => ["a", "c", "a", "c"] });
      const proxy = new Proxy(lying, logging);
      throwsJs(TypeError, () => H(proxy));
      eq(log.length, 2);
      logIs(0, ["get", lying, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", lying]);
    }),
  "Basic operation with Symbol keys": () =>
    withLog(() => {
      const record = {
        a: "b",
        [Symbol.toStringTag]: {
          toString() {
            log.push(["toString", this]);
            return "nope";
          },
        },
        c: "d",
      };
      const proxy = new Proxy(record, logging);
      throwsJs(TypeError, () => H(proxy));
      eq(log.length, 7);
      logIs(0, ["get", record, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", record]);
      logIs(2, ["getOwnPropertyDescriptor", record, "a"]);
      logIs(3, ["get", record, "a", proxy]);
      logIs(4, ["getOwnPropertyDescriptor", record, "c"]);
      logIs(5, ["get", record, "c", proxy]);
      logIs(6, ["getOwnPropertyDescriptor", record, Symbol.toStringTag]);
    }),
  "Operation with non-enumerable Symbol keys": () =>
    withLog(() => {
      const logged = (s) => ({
        toString() {
          log.push(["toString", this]);
          return s;
        },
      });
      const record = { a: logged("b"), [Symbol.toStringTag]: logged("nope"), c: logged("d") };
      Object.defineProperty(record, Symbol.toStringTag, { enumerable: false });
      arrEq(Reflect.ownKeys(record), ["a", "c", Symbol.toStringTag]);
      const proxy = new Proxy(record, logging);
      const h = H(proxy);
      eq(log.length, 9);
      logIs(0, ["get", record, Symbol.iterator, proxy]);
      logIs(1, ["ownKeys", record]);
      logIs(2, ["getOwnPropertyDescriptor", record, "a"]);
      logIs(3, ["get", record, "a", proxy]);
      logIs(4, ["toString", record.a]);
      logIs(5, ["getOwnPropertyDescriptor", record, "c"]);
      logIs(6, ["get", record, "c", proxy]);
      logIs(7, ["toString", record.c]);
      logIs(8, ["getOwnPropertyDescriptor", record, Symbol.toStringTag]);
      eq([...h].length, 2);
      arrEq([...h.keys()], ["a", "c"]);
      yes(h.has("a"));
      eq(h.get("a"), "b");
      yes(h.has("c"));
      eq(h.get("c"), "d");
    }),
};

for (const [file, names] of Object.entries(DATA.cases)) byName(S, file, names, CHECKS[file] || {});

await runAll();
