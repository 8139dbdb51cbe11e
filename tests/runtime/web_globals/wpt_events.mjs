// EventTarget/Event/CustomEvent cases from web-platform-tests (dom/events/
// *.any.js that need no DOM tree and no global EventTarget), through
// wpt_steps.mjs. Names and tables are in wpt/events.json (DATA); the steps
// are ours, asserting what each WPT test asserts. The Event and CustomEvent
// cases are in wpt_events.event.mjs, which runs after this file.
const opt = (v) => (v && v.$ === "undefined" ? undefined : v);
const add = (file, name, fn) => check(`events.${file}.${name}`, fn);

// AddEventListenerOptions-once
{
  const [a, b, c, d] = DATA["AddEventListenerOptions-once"];
  const F = "AddEventListenerOptions-once";
  add(F, a, () => {
    let once = false, normal = false;
    const et = new EventTarget();
    const onceH = () => (once = true);
    const normalH = () => (normal = true);
    et.addEventListener("test", onceH, { once: true });
    et.addEventListener("test", normalH);
    et.dispatchEvent(new Event("test"));
    yes(once); yes(normal);
    once = normal = false;
    et.dispatchEvent(new Event("test"));
    no(once); yes(normal);
  });
  add(F, b, () => {
    const et = new EventTarget();
    let count = 0;
    const h = () => { count++; if (count === 1) et.dispatchEvent(new Event("test")); };
    et.addEventListener("test", h, { once: true });
    et.dispatchEvent(new Event("test"));
    eq(count, 1);
    count = 0;
    const h2 = () => {
      count++;
      if (count === 1) et.addEventListener("test", h2, { once: true });
      if (count <= 2) et.dispatchEvent(new Event("test"));
    };
    et.addEventListener("test", h2, { once: true });
    et.dispatchEvent(new Event("test"));
    eq(count, 2);
  });
  add(F, c, () => {
    let count = 0;
    const h = () => count++;
    const et = new EventTarget();
    et.addEventListener("test", h, { once: true });
    et.addEventListener("test", h);
    et.dispatchEvent(new Event("test"));
    eq(count, 1);
    count = 0;
    et.dispatchEvent(new Event("test"));
    eq(count, 0);
    et.addEventListener("test", h, { once: true });
    et.removeEventListener("test", h);
    et.dispatchEvent(new Event("test"));
    eq(count, 0);
  });
  add(F, d, () => {
    const et = new EventTarget();
    let count = 0;
    for (let n = 4; n > 0; n--) et.addEventListener("test", (e) => { count++; e.stopImmediatePropagation(); }, { once: true });
    for (let n = 4; n > 0; n--) et.dispatchEvent(new Event("test"));
    eq(count, 4);
  });
}

// AddEventListenerOptions-passive
{
  const F = "AddEventListenerOptions-passive";
  const P = DATA[F];
  const [support, prevent, returnValue, others, equivalence] = P.names;
  add(F, support, () => {
    let asked = false;
    const options = { get passive() { asked = true; return false; }, get dummy() { fail("dummy read"); } };
    const et = new EventTarget();
    et.addEventListener("test_event", null, options);
    yes(asked, "addEventListener read passive");
    asked = false;
    et.removeEventListener("test_event", null, options);
    no(asked, "removeEventListener read passive");
  });
  const passiveCase = (how) => (options, expected, existing) => {
    let prevented;
    let error = null;
    const handler = (e) => {
      try {
        no(e.defaultPrevented, "prematurely prevented");
        if (how === "returnValue") e.returnValue = false;
        else e.preventDefault();
        prevented = e.defaultPrevented;
      } catch (err) {
        error = err;
      }
    };
    const et = existing || new EventTarget();
    et.addEventListener("test", handler, options);
    const uncanceled = et.dispatchEvent(new Event("test", { bubbles: true, cancelable: true }));
    if (error) throw error;
    eq(prevented, expected, JSON.stringify(options));
    eq(uncanceled, !expected, "dispatchEvent's result");
    et.removeEventListener("test", handler, options);
  };
  add(F, prevent, () => P.passive_values.forEach(([o, x]) => passiveCase("preventDefault")(opt(o), x)));
  add(F, returnValue, () => P.passive_values.forEach(([o, x]) => passiveCase("returnValue")(opt(o), x)));
  add(F, others, () => {
    for (const [o, x] of P.with_others) {
      let one = false, two = false;
      const h1 = () => (one = true);
      const h2 = () => (two = true);
      const et = new EventTarget();
      et.addEventListener("test", h1, { passive: true });
      et.addEventListener("test", h2);
      passiveCase("preventDefault")(opt(o), x, et);
      yes(one, "passive handler"); yes(two, "non-passive handler");
    }
  });
  add(F, equivalence, () => {
    for (const [o1, o2, same] of P.equivalence) {
      let count = 0;
      const h = () => count++;
      const et = new EventTarget();
      et.addEventListener("test", h, opt(o1));
      et.addEventListener("test", h, opt(o2));
      et.dispatchEvent(new Event("test", { bubbles: true }));
      eq(count, same ? 1 : 2, `${JSON.stringify(o1)} and ${JSON.stringify(o2)}`);
    }
  });
}

// AddEventListenerOptions-signal
{
  const F = "AddEventListenerOptions-signal";
  const N = DATA[F];
  const counter = () => {
    const c = { n: 0 };
    c.h = () => c.n++;
    return c;
  };
  add(F, N[0], () => {
    const c = counter(), et = new EventTarget(), ac = new AbortController();
    et.addEventListener("test", c.h, { signal: ac.signal });
    et.dispatchEvent(new Event("test"));
    eq(c.n, 1);
    et.dispatchEvent(new Event("test"));
    eq(c.n, 2);
    ac.abort();
    et.dispatchEvent(new Event("test"));
    eq(c.n, 2);
    et.addEventListener("test", c.h, { signal: ac.signal });
    et.dispatchEvent(new Event("test"));
    eq(c.n, 2);
  });
  add(F, N[1], () => {
    const c = counter(), et = new EventTarget(), ac = new AbortController();
    et.addEventListener("test", c.h, { signal: ac.signal });
    et.removeEventListener("test", c.h);
    et.dispatchEvent(new Event("test"));
    eq(c.n, 0);
  });
  add(F, N[2], () => {
    const c = counter(), et = new EventTarget(), ac = new AbortController();
    et.addEventListener("test", c.h, { signal: ac.signal, once: true });
    ac.abort();
    et.dispatchEvent(new Event("test"));
    eq(c.n, 0);
  });
  add(F, N[3], () => {
    const c = counter(), et = new EventTarget(), ac = new AbortController();
    et.addEventListener("test", c.h, { signal: ac.signal, once: true });
    et.removeEventListener("test", c.h);
    et.dispatchEvent(new Event("test"));
    eq(c.n, 0);
  });
  add(F, N[4], () => {
    const c = counter(), et = new EventTarget(), ac = new AbortController();
    et.addEventListener("first", c.h, { signal: ac.signal, once: true });
    et.addEventListener("second", c.h, { signal: ac.signal, once: true });
    ac.abort();
    et.dispatchEvent(new Event("first"));
    et.dispatchEvent(new Event("second"));
    eq(c.n, 0);
  });
  add(F, N[5], () => {
    const c = counter(), et = new EventTarget(), ac = new AbortController();
    et.addEventListener("test", c.h, { signal: ac.signal, capture: true });
    ac.abort();
    et.dispatchEvent(new Event("test"));
    eq(c.n, 0);
  });
  add(F, N[6], () => {
    const c = counter(), et = new EventTarget(), ac = new AbortController();
    et.addEventListener("test", () => ac.abort(), { signal: ac.signal });
    et.addEventListener("test", c.h, { signal: ac.signal });
    et.dispatchEvent(new Event("test"));
    eq(c.n, 0);
  });
  add(F, N[7], () => {
    const c = counter(), et = new EventTarget(), ac = new AbortController();
    et.addEventListener("test", () => {
      et.addEventListener("test", c.h, { signal: ac.signal });
      ac.abort();
    }, { signal: ac.signal });
    et.dispatchEvent(new Event("test"));
    eq(c.n, 0);
  });
  add(F, N[8], () => {
    const et = new EventTarget(), ac = new AbortController();
    let count = 0;
    et.addEventListener("foo", () => {
      et.addEventListener("foo", () => {
        count++;
        if (count > 5) ac.abort();
        et.dispatchEvent(new Event("foo"));
      }, { signal: ac.signal });
      et.dispatchEvent(new Event("foo"));
    }, { once: true });
    et.dispatchEvent(new Event("foo"));
  });
  add(F, N[9], () => throwsJs(TypeError, () => new EventTarget().addEventListener("foo", () => {}, { signal: null })));
  add(F, N[10], () => throwsJs(TypeError, () => new EventTarget().addEventListener("foo", null, { signal: null })));
}

// EventListener-handleEvent (its three cases that watch the global's error event are left out)
{
  const [calls, get, callable] = DATA["EventListener-handleEvent"];
  const F = "EventListener-handleEvent";
  add(F, calls, () => {
    const target = new EventTarget();
    let seen = null;
    const listener = { handleEvent(evt) { seen = [evt.type, evt.target, evt.srcElement, this]; } };
    target.addEventListener("foo", listener);
    target.dispatchEvent(new Event("foo"));
    arrEq(seen, ["foo", target, target, listener]);
  });
  add(F, get, () => {
    const target = new EventTarget();
    let count = 0;
    target.addEventListener("foo", { get handleEvent() { count++; return function () {}; } });
    eq(count, 0);
    target.dispatchEvent(new Event("foo"));
    target.dispatchEvent(new Event("foo"));
    eq(count, 2);
  });
  add(F, callable, () => {
    const target = new EventTarget();
    let count = 0;
    const listener = function () { count++; };
    let wrong = false;
    listener.handleEvent = () => (wrong = true);
    target.addEventListener("foo", listener);
    target.dispatchEvent(new Event("foo"));
    eq(count, 1);
    no(wrong, "handleEvent called on a function");
  });
}

add("EventTarget-add-remove-listener", DATA["EventTarget-add-remove-listener"][0], () => {
  const listener = (evt) => {
    evt.preventDefault();
    return false;
  };
  const et = new EventTarget();
  et.addEventListener("x", listener, false);
  no(et.dispatchEvent(new Event("x", { cancelable: true })));
  et.removeEventListener("x", listener);
  yes(et.dispatchEvent(new Event("x", { cancelable: true })));
});
add("EventTarget-addEventListener", DATA["EventTarget-addEventListener"][0], () => {
  const et = new EventTarget();
  eq(et.addEventListener("x", null, false), undefined);
  eq(et.addEventListener("x", null, true), undefined);
  eq(et.addEventListener("x", null), undefined);
});
{
  const [used, subclassed] = DATA["EventTarget-constructible"];
  add("EventTarget-constructible", used, () => {
    const target = new EventTarget();
    const event = new Event("foo", { bubbles: true, cancelable: false });
    let count = 0;
    const listener = (e) => {
      eq(e, event);
      ++count;
    };
    target.addEventListener("foo", listener);
    target.dispatchEvent(event);
    eq(count, 1);
    target.dispatchEvent(event);
    eq(count, 2);
    target.removeEventListener("foo", listener);
    target.dispatchEvent(event);
    eq(count, 2);
  });
  add("EventTarget-constructible", subclassed, () => {
    // As in WPT, `detail` is not declared: the case fails wherever the listener runs.
    class NicerEventTarget extends EventTarget {
      on(...args) { this.addEventListener(...args); }
      off(...args) { this.removeEventListener(...args); }
      dispatch(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail })); }
    }
    const target = new NicerEventTarget();
    let count = 0;
    let error = null;
    const listener = (e) => {
      try {
        eq(e.detail, detail); // eslint-disable-line no-undef
        ++count;
      } catch (err) {
        error = err;
      }
    };
    target.on("foo", listener);
    target.dispatch("foo", undefined);
    if (error) throw error;
    eq(count, 1);
  });
}

{
  const D = DATA["EventTarget-dispatchEvent"];
  const [flag, exceptions, capture] = D.names;
  const F = "EventTarget-dispatchEvent";
  add(F, flag, () => {
    const e = new Event("type", { bubbles: false, cancelable: false });
    const target = new EventTarget();
    let inner = null;
    target.addEventListener("type", () => {
      try {
        throwsDom("InvalidStateError", () => target.dispatchEvent(e));
      } catch (err) {
        inner = err;
      }
    }, false);
    eq(target.dispatchEvent(e), true);
    if (inner) throw inner;
  });
  add(F, exceptions, () => {
    const e = new Event("type", { bubbles: false, cancelable: false });
    const called = [];
    const target = new EventTarget();
    target.addEventListener("type", () => {
      called.push(D.called[0]);
      throw new Error();
    }, false);
    target.addEventListener("type", () => called.push(D.called[1]), false);
    eq(target.dispatchEvent(e), true);
    arrEq(called, D.called);
  });
  add(F, capture, () => {
    const results = [];
    const target = new EventTarget();
    target.addEventListener("x", () => results.push(1), true);
    target.addEventListener("x", () => results.push(2), false);
    target.addEventListener("x", () => results.push(3), true);
    target.dispatchEvent(new Event("x"));
    arrEq(results, D.capture_order);
  });
}

{
  const [removeAll, nested] = DATA["remove-all-listeners"];
  add("remove-all-listeners", removeAll, () => {
    const target = new EventTarget();
    const n = [0, 0, 0];
    const l2 = () => n[1]++;
    const l3 = () => n[2]++;
    const l1 = () => {
      n[0]++;
      target.removeEventListener("foo", l1);
      target.removeEventListener("foo", l2);
      target.addEventListener("foo", l3);
    };
    target.addEventListener("foo", l1);
    target.addEventListener("foo", l2);
    target.dispatchEvent(new Event("foo"));
    arrEq(n, [1, 0, 0]);
    target.dispatchEvent(new Event("foo"));
    arrEq(n, [1, 0, 1]);
  });
  add("remove-all-listeners", nested, () => {
    const target = new EventTarget();
    const n = [0, 0, 0];
    let inner = null;
    const l2 = () => n[1]++;
    const l3 = () => n[2]++;
    const l1 = () => {
      n[0]++;
      target.dispatchEvent(new Event("foo"));
      inner = [...n];
      target.addEventListener("foo", l3);
    };
    target.addEventListener("foo", l1, { once: true });
    target.addEventListener("foo", l2, { once: true });
    target.dispatchEvent(new Event("foo"));
    arrEq(inner, [1, 1, 0], "inside");
    arrEq(n, [1, 1, 0]);
    target.dispatchEvent(new Event("foo"));
    arrEq(n, [1, 1, 1]);
  });
}
