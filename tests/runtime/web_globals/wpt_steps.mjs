// A small case runner for the WPT-derived suites (wpt_*.mjs), written for
// hugind: each case is a name and a step function (check); after the suite's
// files, the test adds `await runCases()`. The steps run one at a
// time (async ones awaited, each with a time limit), and each prints one line
// "<name> ok|fail|timeout", then "done". Names are printed with every
// non-printable or non-ASCII code unit escaped, so the line is the same bytes
// under node and hugind. Why a case failed goes to stderr.
const CASES = [];
const check = (name, fn) => void CASES.push([name, fn]);
const printable = (s) =>
  s.replace(/[^\x20-\x7e]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));

class Failure extends Error {}
const fail = (why) => {
  throw new Failure(why);
};
const same = (a, b) => Object.is(a, b);
const show = (v) => {
  try {
    return typeof v === "string" ? JSON.stringify(v) : typeof v === "bigint" ? `${v}n` : String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
};
const eq = (a, b, what = "") => {
  if (!same(a, b)) fail(`${what} ${show(a)} !== ${show(b)}`);
};
const ne = (a, b, what = "") => {
  if (same(a, b)) fail(`${what} ${show(a)} should differ`);
};
const yes = (v, what = "") => {
  if (v !== true) fail(`${what} not true`);
};
const no = (v, what = "") => {
  if (v !== false) fail(`${what} not false`);
};
const arrEq = (a, b, what = "") => {
  if (a.length !== b.length) fail(`${what} length ${a.length} !== ${b.length}`);
  for (let i = 0; i < a.length; i++) eq(a[i], b[i], `${what}[${i}]`);
};
// fn throws, and the thrown value passes `accept` (a Failure of an inner check
// passes through as itself).
const throwsWhere = (accept, fn, what) => {
  try {
    fn();
  } catch (e) {
    if (e instanceof Failure) throw e;
    if (!accept(e)) fail(`${what} threw ${show(e)}`);
    return;
  }
  fail(`${what} did not throw`);
};
// The thrown value is an instance of this global's constructor, and not of a
// different error constructor in the chain (TypeError, not just Error).
const throwsJs = (Ctor, fn, what = "") =>
  throwsWhere((e) => e instanceof Ctor && (Ctor === Error || e.constructor === Ctor), fn, what);
const throwsDom = (name, fn, what = "") => throwsWhere((e) => e instanceof DOMException && e.name === name, fn, what);
const throwsExactly = (value, fn, what = "") => throwsWhere((e) => same(e, value), fn, what);
const rejects = async (promise, test) => {
  try {
    await promise;
  } catch (e) {
    test(e);
    return;
  }
  fail("did not reject");
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// An exception thrown by an event listener is reported and the dispatch goes
// on (HTML's "report an exception"; WPT allows it where a case expects it).
// node reports it by ending the process unless something listens for it.
if (typeof process === "object" && process.release?.name === "node") {
  process.on("uncaughtException", (e) => console.error(`reported: ${show(e)}`));
}

async function runCases(limitMs = 5000) {
  for (const [name, fn] of CASES) {
    let timer;
    const limit = new Promise((resolve) => (timer = setTimeout(() => resolve("timeout"), limitMs)));
    let result;
    try {
      // A step may return "skipped" when the reference cannot run it at all.
      result = await Promise.race([Promise.resolve().then(fn).then((r) => (r === "skipped" ? r : "ok")), limit]);
    } catch (e) {
      console.error(`${printable(name)}: ${e instanceof Failure ? e.message : show(e)}`);
      result = "fail";
    }
    clearTimeout(timer);
    console.log(`${printable(name)} ${result}`);
  }
  console.log("done");
}
