// setTimeout/setInterval over the host clock: the host sleeps on a worker
// thread (op time.sleep), so timers never block other async work and respect
// the run's deadline. A cleared timer's sleep still ends on the host; its
// callback is simply not called.
(function (web) {
  const { install, submit } = web;
  let nextTimer = 1;
  const live = new Map(); // id -> {fn, args, ms, repeat}

  // The timeout is a WebIDL long: ToInt32 wraps it (2 ** 32 is 0, 2 ** 31 is
  // negative), and HTML makes a negative one 0.
  const delay = (ms) => Math.max(0, Number(ms) | 0);

  function arm(id) {
    const timer = live.get(id);
    submit("time.sleep", { ms: timer.ms }).then(() => {
      if (live.get(id) !== timer) return;
      if (timer.repeat) arm(id);
      else live.delete(id);
      timer.fn(...timer.args);
    });
  }

  function start(fn, ms, args, repeat) {
    if (typeof fn !== "function") throw new TypeError("The \"callback\" argument must be of type function");
    const id = nextTimer++;
    // An interval of 0 would spin through host calls; browsers clamp too.
    live.set(id, { fn, args, ms: repeat ? Math.max(1, ms) : ms, repeat });
    arm(id);
    return id;
  }

  const clear = (id) => void live.delete(typeof id === "number" ? id : Number(id));
  install("setTimeout", (fn, ms = 0, ...args) => start(fn, delay(ms), args, false));
  install("setInterval", (fn, ms = 0, ...args) => start(fn, delay(ms), args, true));
  // Two functions, each with its own name, as the global's operations are.
  install("clearTimeout", (id) => clear(id));
  install("clearInterval", (id) => clear(id));
  // For the platform's own timers (AbortSignal.timeout's unsigned long long): not wrapped.
  web.setTimeout = (fn, ms) => start(fn, Math.max(0, Number(ms) || 0), [], false);
  web.clearTimeout = clear;
});
