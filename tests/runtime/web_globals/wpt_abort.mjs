// AbortController/AbortSignal cases from web-platform-tests (dom/abort/
// event.any.js, AbortSignal.any.js, abort-signal-any.any.js), through
// wpt_steps.mjs. Names and expected traces are in wpt/abort.json (DATA);
// the steps are ours, asserting what each WPT test asserts.
const isAbortError = (r, name = "AbortError") => {
  yes(r instanceof DOMException, "reason is a DOMException");
  eq(r.name, name, "reason name");
};
// Resolves when fn has been called, or rejects when a guard timer fires first.
const firesWithin = (arm, guardMs = 3000) =>
  new Promise((resolve, reject) => {
    const guard = setTimeout(() => reject(new Error("never fired")), guardMs);
    arm((v) => (clearTimeout(guard), resolve(v)));
  });

const STEPS = {
  event: {
    "AbortController abort() should fire event synchronously": (x) => {
      const c = new AbortController();
      const s = c.signal;
      const states = [];
      let state = x.states[0];
      no(s.aborted);
      yes("reason" in s);
      eq(s.reason, undefined);
      s.addEventListener("abort", () => {
        states.push(state);
        state = x.states[1];
      });
      c.abort();
      eq(state, x.states[1]);
      arrEq(states, [x.states[0]]);
      yes(s.aborted);
      isAbortError(s.reason, x.reason);
      c.abort();
    },
    "controller.signal should always return the same object": () => {
      const c = new AbortController();
      const s = c.signal;
      eq(c.signal, s);
      c.abort();
      eq(c.signal, s);
    },
    "controller.abort() should do nothing the second time it is called": (x) => {
      const c = new AbortController();
      let count = 0;
      c.signal.onabort = () => ++count;
      c.abort();
      yes(c.signal.aborted);
      eq(count, x.calls);
      c.abort();
      eq(count, x.calls);
    },
    "event handler should not be called if added after controller.abort()": () => {
      const c = new AbortController();
      c.abort();
      let called = false;
      c.signal.onabort = () => (called = true);
      no(called);
    },
    "the abort event should have the right properties": (x) => {
      const c = new AbortController();
      const s = c.signal;
      let seen = null;
      s.onabort = (e) => (seen = e);
      c.abort();
      yes(seen !== null, "handler called");
      eq(seen.type, x.type);
      eq(seen.target, s);
      eq(seen.bubbles, x.bubbles);
      eq(seen.isTrusted, x.isTrusted);
    },
    "AbortController abort(reason) should set signal.reason": (x) => {
      const c = new AbortController();
      eq(c.signal.reason, undefined);
      const reason = Error(x.message);
      c.abort(reason);
      yes(c.signal.aborted);
      eq(c.signal.reason, reason);
    },
    'aborting AbortController without reason creates an "AbortError" DOMException': (x) => {
      const c = new AbortController();
      yes("reason" in c.signal);
      eq(c.signal.reason, undefined);
      c.abort();
      yes(c.signal.aborted);
      isAbortError(c.signal.reason, x.reason);
    },
    'AbortController abort(undefined) creates an "AbortError" DOMException': (x) => {
      const c = new AbortController();
      c.abort(undefined);
      yes(c.signal.aborted);
      isAbortError(c.signal.reason, x.reason);
    },
    "AbortController abort(null) should set signal.reason": (x) => {
      const c = new AbortController();
      c.abort(null);
      yes(c.signal.aborted);
      eq(c.signal.reason, x.reason);
    },
    "static aborting signal should have right properties": (x) => {
      const s = AbortSignal.abort();
      yes(s.aborted);
      isAbortError(s.reason, x.reason);
    },
    "static aborting signal with reason should set signal.reason": (x) => {
      const reason = Error(x.message);
      const s = AbortSignal.abort(reason);
      yes(s.aborted);
      eq(s.reason, reason);
    },
    "throwIfAborted() should throw abort.reason if signal aborted": (x) => {
      const reason = new Error(x.message);
      const s = AbortSignal.abort(reason);
      yes(s.aborted);
      throwsExactly(reason, () => s.throwIfAborted());
    },
    "throwIfAborted() should throw primitive abort.reason if signal aborted": (x) => {
      const s = AbortSignal.abort(x.reason);
      yes(s.aborted);
      throwsExactly(x.reason, () => s.throwIfAborted());
    },
    "throwIfAborted() should not throw if signal not aborted": () => {
      const c = new AbortController();
      no(c.signal.aborted);
      c.signal.throwIfAborted();
    },
    "AbortSignal.reason returns the same DOMException": () => {
      const s = AbortSignal.abort();
      yes(s.reason instanceof DOMException);
      eq(s.reason, s.reason);
    },
    "AbortController.signal.reason returns the same DOMException": () => {
      const c = new AbortController();
      c.abort();
      yes(c.signal.reason instanceof DOMException);
      eq(c.signal.reason, c.signal.reason);
    },
  },
  AbortSignal: {
    "the AbortSignal.abort() static returns an already aborted signal": () => {
      const s = AbortSignal.abort();
      yes(s instanceof AbortSignal);
      yes(s.aborted);
    },
    "signal returned by AbortSignal.abort() should not fire abort event": async (x) => {
      const s = AbortSignal.abort();
      let fired = 0;
      s.addEventListener("abort", () => ++fired);
      s.onabort = () => ++fired;
      await sleep(x.waitMs);
      eq(fired, 0);
    },
    "AbortSignal.timeout() returns a non-aborted signal": (x) => {
      const s = AbortSignal.timeout(x.ms);
      yes(s instanceof AbortSignal);
      no(s.aborted);
    },
    "Signal returned by AbortSignal.timeout() times out": async (x) => {
      const s = AbortSignal.timeout(x.ms);
      await firesWithin((done) => (s.onabort = done));
      yes(s.aborted);
      isAbortError(s.reason, x.reason);
    },
    "AbortSignal timeouts fire in order": async (x) => {
      let result = "";
      for (const v of x.values) AbortSignal.timeout(x.ms).onabort = () => (result += v);
      const last = AbortSignal.timeout(x.ms);
      await firesWithin((done) => (last.onabort = done));
      eq(result, x.order);
    },
  },
  "abort-signal-any": {
    "AbortSignal.any() works with an empty array of signals": () => no(AbortSignal.any([]).aborted),
    "AbortSignal.any() follows a single signal (using AbortController)": (x) => {
      const c = new AbortController();
      const clone = AbortSignal.any([c.signal]);
      no(clone.aborted);
      yes("reason" in clone);
      eq(clone.reason, undefined);
      ne(c.signal, clone);
      let target = null;
      clone.onabort = (e) => (target = e.target);
      c.abort(x.reason);
      yes(c.signal.aborted);
      yes(clone.aborted);
      eq(target, clone, "event fired at the clone");
      eq(clone.reason, x.reason);
    },
    "AbortSignal.any() follows multiple signals (using AbortController)": (x) => {
      for (let i = 0; i < 3; ++i) {
        const cs = [0, 1, 2].map(() => new AbortController());
        const combined = AbortSignal.any(cs.map((c) => c.signal));
        let target = null;
        combined.onabort = (e) => (target = e.target);
        cs[i].abort();
        eq(target, combined, "event fired at the combined signal");
        yes(combined.aborted);
        isAbortError(combined.reason, x.reason);
      }
    },
    "AbortSignal.any() returns an aborted signal if passed an aborted signal (using AbortController)": (x) => {
      const cs = x.reasons.map(() => new AbortController());
      x.reasons.forEach((r, i) => r !== null && cs[i].abort(r));
      const s = AbortSignal.any(cs.map((c) => c.signal));
      yes(s.aborted);
      eq(s.reason, x.reason);
    },
    "AbortSignal.any() can be passed the same signal more than once (using AbortController)": (x) => {
      const c = new AbortController();
      const s = AbortSignal.any([c.signal, c.signal]);
      no(s.aborted);
      c.abort(x.reason);
      yes(s.aborted);
      eq(s.reason, x.reason);
    },
    "AbortSignal.any() uses the first instance of a duplicate signal (using AbortController)": (x) => {
      const [c1, c2] = x.reasons.map((r) => {
        const c = new AbortController();
        c.abort(r);
        return c;
      });
      const s = AbortSignal.any([c1.signal, c2.signal, c1.signal]);
      yes(s.aborted);
      eq(s.reason, x.reason);
    },
    "AbortSignal.any() signals are composable (using AbortController)": (x) => {
      for (let i = 0; i < 3; ++i) {
        const cs = [0, 1, 2].map(() => new AbortController());
        const one = AbortSignal.any([cs[0].signal, cs[1].signal]);
        const two = AbortSignal.any([one, cs[2].signal]);
        let fired = false;
        two.onabort = () => (fired = true);
        cs[i].abort();
        yes(fired, "event fired");
        yes(two.aborted);
        isAbortError(two.reason, x.reason);
      }
    },
    "AbortSignal.any() works with signals returned by AbortSignal.timeout() (using AbortController)": async (x) => {
      const c = new AbortController();
      const combined = AbortSignal.any([c.signal, AbortSignal.timeout(x.ms)]);
      let late = false;
      const ref = setTimeout(() => (late = true), x.guardMs);
      await firesWithin((done) => (combined.onabort = done));
      clearTimeout(ref);
      no(late, "the guard timer fired first");
      yes(combined.aborted);
      isAbortError(combined.reason, x.reason);
    },
    "AbortSignal.any() works with intermediate signals (using AbortController)": (x) => {
      const c = new AbortController();
      let combined = AbortSignal.any([c.signal]);
      for (let i = 0; i < 3; i++) combined = AbortSignal.any([combined]);
      let fired = false;
      combined.onabort = () => (fired = true);
      no(fired);
      no(combined.aborted);
      c.abort(x.reason);
      yes(fired);
      yes(combined.aborted);
      eq(combined.reason, x.reason);
    },
    "Abort events for AbortSignal.any() signals fire in the right order (using AbortController)": (x) => {
      const c = new AbortController();
      const signals = [c.signal];
      signals.push(AbortSignal.any([c.signal]));
      signals.push(AbortSignal.any([c.signal]));
      signals.push(AbortSignal.any([signals[0]]));
      signals.push(AbortSignal.any([signals[1]]));
      let result = "";
      signals.forEach((s, i) => s.addEventListener("abort", () => (result += i)));
      c.abort();
      eq(result, x.order);
    },
  },
};

for (const [file, cases] of Object.entries(DATA)) {
  for (const [name, expect] of cases) check(`abort.${file}.${name}`, () => STEPS[file][name](expect));
}
