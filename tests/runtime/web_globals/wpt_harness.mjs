// A small harness for the web-platform-tests suites beside it (wpt_*.mjs):
// a case passes when its check returns (or its promise resolves) without
// throwing. One line per case, "<suite>.<wpt file>.<case name> ok|fail", then
// "done"; the Python side compares node's lines with hugind's. Case names are
// written with every code unit outside printable ASCII as \uXXXX so both
// runtimes print the same bytes.
const OUTCOMES = [];
const QUEUE = [];

const escapeName = (s) =>
  String(s).replace(/[^\x20-\x7e]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));

class Failure extends Error {}
const fail = (what) => {
  throw new Failure(what);
};
const same = (a, b) => Object.is(a, b) || (a === b);
function eq(actual, expected, what = "") {
  if (!same(actual, expected)) fail(`${what}: ${String(actual)} !== ${String(expected)}`);
}
function yes(value, what = "") {
  if (value !== true) fail(`${what}: not true`);
}
function no(value, what = "") {
  if (value !== false) fail(`${what}: not false`);
}
function arrEq(actual, expected, what = "") {
  if (actual === null || typeof actual !== "object") fail(`${what}: not array-like`);
  eq(actual.length, expected.length, `${what} length`);
  for (let i = 0; i < expected.length; i++) eq(actual[i], expected[i], `${what}[${i}]`);
}
function nestedEq(actual, expected, what = "") {
  eq(actual.length, expected.length, `${what} length`);
  expected.forEach((e, i) => arrEq(actual[i], e, `${what}[${i}]`));
}
function throwsJs(ctor, fn, what = "") {
  try {
    fn();
  } catch (e) {
    if (e instanceof Failure) throw e;
    if (!(e instanceof ctor) || e.constructor !== ctor) fail(`${what}: threw ${e && e.name}, not ${ctor.name}`);
    return;
  }
  fail(`${what}: did not throw`);
}
function throwsDom(name, fn, what = "") {
  try {
    fn();
  } catch (e) {
    if (e instanceof Failure) throw e;
    if (!(e instanceof DOMException) || e.name !== name) fail(`${what}: threw ${e && e.name}, not ${name}`);
    return;
  }
  fail(`${what}: did not throw`);
}
async function rejectsJs(ctor, promise, what = "") {
  try {
    await promise;
  } catch (e) {
    if (!(e instanceof ctor) || e.constructor !== ctor) fail(`${what}: rejected with ${e && e.name}, not ${ctor.name}`);
    return;
  }
  fail(`${what}: did not reject`);
}

// Queue one case; cases run one after another, in order.
function test(suite, file, name, fn) {
  QUEUE.push([`${suite}.${file}.${escapeName(name)}`, fn]);
}

// The JSON's list of case names for a file, each run by the check of that name.
function byName(suite, file, names, checks) {
  for (const name of names) {
    const fn = checks[name];
    test(suite, file, name, fn === undefined ? null : fn);
  }
}

async function runAll() {
  for (const [name, fn] of QUEUE) {
    if (fn === null) {
      // A case in the data with no check written for it: the Python side refuses this.
      OUTCOMES.push(`${name} nocheck`);
      continue;
    }
    let ok;
    try {
      await fn();
      ok = true;
    } catch (e) {
      ok = false;
      if (globalThis.WPT_VERBOSE) console.error(name, e && e.message);
    }
    OUTCOMES.push(`${name} ${ok ? "ok" : "fail"}`);
  }
  console.log(OUTCOMES.join("\n"));
  console.log("done");
}
