// performance cases from web-platform-tests (hr-time/basic.any.js,
// hr-time/monotonic-clock.any.js, the first case of hr-time/timeOrigin.html),
// through wpt_steps.mjs; names and figures are in wpt/performance.json (DATA).
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

// hr-time/timeOrigin.html's first case: its assertions hold in any global.
// The origin is read as the script starts, as WPT reads it at load.
const origin = performance.timeOrigin;
check("performance.timeOrigin." + DATA.timeOrigin.name, () => {
  const cushion = DATA.timeOrigin.cushionMs;
  const start = Date.now();
  yes(start + cushion >= origin, "Date.now() at least the timeOrigin");
  const now = performance.now();
  yes(start <= origin + now + cushion, "Date.now() close to timeOrigin + now()");
});
