// Timer and queueMicrotask cases from web-platform-tests
// (html/webappapis/timers/*.any.js, html/webappapis/microtask-queuing/
// queue-microtask.any.js), through wpt_steps.mjs. Delays, counts and names
// are in wpt/timers.json (DATA); the steps are ours. Every timer a case
// starts is cleared when it ends, so the run does not wait on leftovers.
const T = DATA.timers;
const P = "timers.";

// A case over timers: resolves through done(), fails through unreached() or
// an exception in a callback; clears the timers it was given on the way out.
function timerCase(body) {
  return () =>
    new Promise((resolve, reject) => {
      const timeouts = [];
      const intervals = [];
      const finish = (fn) => (arg) => {
        timeouts.forEach(clearTimeout);
        intervals.forEach(clearInterval);
        fn(arg);
      };
      const t = {
        done: finish(resolve),
        unreached: (why = "unreached") => finish(reject)(new Failure(why)),
        timeout: (...a) => (timeouts.push(setTimeout(...a)), timeouts.at(-1)),
        interval: (...a) => (intervals.push(setInterval(...a)), intervals.at(-1)),
        step: (fn) => (...args) => {
          try {
            return fn(...args);
          } catch (e) {
            finish(reject)(e);
          }
        },
      };
      t.step(body)(t);
    });
}

{
  const C = T["cleartimeout-clearinterval"];
  check(P + "cleartimeout-clearinterval." + C.names[0], timerCase((t) => {
    const handle = t.timeout(() => t.unreached("Timeout was not canceled"), C.delay);
    clearInterval(handle);
    t.timeout(t.done, C.waitMs);
  }));
  check(P + "cleartimeout-clearinterval." + C.names[1], timerCase((t) => {
    const handle = t.interval(() => t.unreached("Interval was not canceled"), C.delay);
    clearTimeout(handle);
    t.timeout(t.done, C.waitMs);
  }));
}
{
  const C = T["clearinterval-from-callback"];
  check(P + "clearinterval-from-callback." + C.name, timerCase((t) => {
    let before = false;
    const handle = t.interval(t.step(() => {
      if (before) return t.unreached();
      before = true;
      clearInterval(handle);
      t.interval(t.done, C.doneAfter);
    }), C.interval);
  }));
}
{
  const C = T["missing-timeout-setinterval"];
  const twice = (...rest) => timerCase((t) => {
    let n = 0;
    const h = t.interval(() => {
      if (++n === C.calls) {
        clearInterval(h);
        t.done();
      }
    }, ...rest);
    t.timeout(() => t.timeout(() => t.unreached("not called twice"), C.trampolineMs), C.trampolineMs);
  });
  check(P + "missing-timeout-setinterval." + C.names[0], twice());
  check(P + "missing-timeout-setinterval." + C.names[1], twice(undefined));
}
{
  const C = T["negative-setinterval"];
  check(P + "negative-setinterval." + C.name, timerCase((t) => {
    let i = 0;
    t.timeout(() => t.unreached("too slow"), C.guardMs);
    const h = t.interval(() => {
      if (++i === C.calls) {
        clearInterval(h);
        t.done();
      }
    }, C.interval);
  }));
}
{
  const C = T["negative-settimeout"];
  check(P + "negative-settimeout." + C.name, timerCase((t) => {
    t.timeout(t.done, C.delay);
    t.timeout(() => t.unreached("the negative timeout came later"), C.guardMs);
  }));
}
{
  const C = T["type-long-setinterval"];
  check(P + "type-long-setinterval." + C.name, timerCase((t) => {
    const h = t.interval(() => {
      clearInterval(h);
      t.done();
    }, C.interval);
    t.timeout(() => t.unreached("2**32 ms was not taken as 0"), C.guardMs);
  }));
}
{
  const C = T["type-long-settimeout"];
  check(P + "type-long-settimeout." + C.name, timerCase((t) => {
    t.timeout(t.done, C.delay);
    t.timeout(() => t.unreached("2**32 ms was not taken as 0"), C.guardMs);
  }));
}

// queue-microtask.any.js
{
  const [exists, throwsOn, async_, noArgs, interleave] = DATA.microtask.names;
  const Q = P + "queue-microtask.";
  check(Q + exists, () => eq(typeof queueMicrotask, "function"));
  check(Q + throwsOn, () => {
    throwsJs(TypeError, () => queueMicrotask(), "no argument");
    for (const bad of [undefined, null, 0, { handleEvent() {} }, "window.x = 5;"]) {
      throwsJs(TypeError, () => queueMicrotask(bad), show(bad));
    }
  });
  check(Q + async_, async () => {
    let called = false;
    const ran = new Promise((resolve) => queueMicrotask(() => resolve((called = true))));
    no(called);
    await ran;
  });
  check(Q + noArgs, async () => {
    const args = await new Promise((resolve) => queueMicrotask(function () { resolve([...arguments]); }, "x", "y"));
    arrEq(args, []);
  });
  check(Q + interleave, async () => {
    const seen = [];
    Promise.resolve().then(() => seen.push("a"));
    queueMicrotask(() => seen.push("b"));
    Promise.reject().catch(() => seen.push("c"));
    await new Promise((resolve) => queueMicrotask(resolve));
    arrEq(seen, DATA.microtask.order);
  });
}
