// performance.now() cases from web-platform-tests (hr-time/basic.any.js,
// hr-time/monotonic-clock.any.js), through wpt_harness.mjs; names and the
// magnitude check's figures are in wpt/performance.json (DATA).
const [isFunction, positive, notNegative, magnitude] = DATA.basic;
const B = "performance.basic.";
check(B + isFunction, () => {
  yes(performance !== undefined);
  eq(typeof performance, "object");
  eq(typeof performance.now, "function");
  eq(typeof performance.now(), "number");
});
check(B + positive, () => yes(performance.now() > 0));
check(B + notNegative, () => {
  const a = performance.now();
  const b = performance.now();
  yes(b - a >= 0);
});
check(B + magnitude, async () => {
  const hrt = performance.now();
  const date = Date.now();
  await sleep(DATA.magnitude.waitMs);
  const dh = performance.now() - hrt;
  const dd = Date.now() - date;
  if (Math.abs(dh - dd) > DATA.magnitude.toleranceMs) fail(`${dh} vs ${dd}`);
});
const [mPositive, mNotNegative] = DATA["monotonic-clock"];
// WPT reads performance off `self`, the global; node has no `self`, so globalThis.
const M = "performance.monotonic-clock.";
check(M + mPositive, () => yes(globalThis.performance.now() > 0));
check(M + mNotNegative, () => {
  const a = globalThis.performance.now();
  const b = globalThis.performance.now();
  yes(b - a >= 0);
});

await runCases();
