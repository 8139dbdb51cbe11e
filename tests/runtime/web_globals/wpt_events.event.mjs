// The Event and CustomEvent cases of the events suite (dom/events/Event-*.any.js,
// CustomEvent.any.js): the second part of wpt_events.mjs, whose helpers it uses.

// Event-constructors (unnamed tests: testharness names them after the title)
{
  const F = "Event-constructors";
  const { title } = DATA[F];
  const fresh = (ev, type) => {
    eq(ev.type, type);
    eq(ev.target, null); eq(ev.srcElement, null); eq(ev.currentTarget, null);
    eq(ev.eventPhase, Event.NONE);
    eq(ev.bubbles, false); eq(ev.cancelable, false); eq(ev.defaultPrevented, false); eq(ev.returnValue, true);
    eq(ev.isTrusted, false);
    yes(ev.timeStamp > 0, "timeStamp");
    yes("initEvent" in ev, "initEvent");
  };
  const steps = [
    () => throwsJs(TypeError, () => Event("")),
    () => throwsJs(TypeError, () => new Event()),
    () => {
      const err = { name: "test" };
      throwsExactly(err, () => new Event({ toString() { throw err; } }));
    },
    () => fresh(new Event(""), ""),
    () => fresh(new Event("test"), "test"),
    () => throwsJs(TypeError, () => Event("test")),
    () => {
      const ev = new Event("I am an event", { bubbles: true, cancelable: false });
      eq(ev.type, "I am an event"); eq(ev.bubbles, true); eq(ev.cancelable, false);
    },
    () => {
      const ev = new Event("@", { bubblesIGNORED: true, cancelable: true });
      eq(ev.type, "@"); eq(ev.bubbles, false); eq(ev.cancelable, true);
    },
    () => {
      const ev = new Event("@", { "bubbles\0IGNORED": true, cancelable: true });
      eq(ev.type, "@"); eq(ev.bubbles, false); eq(ev.cancelable, true);
    },
    () => {
      const ev = new Event("Xx", { cancelable: true });
      eq(ev.type, "Xx"); eq(ev.bubbles, false); eq(ev.cancelable, true);
    },
    () => {
      const ev = new Event("Xx", {});
      eq(ev.type, "Xx"); eq(ev.bubbles, false); eq(ev.cancelable, false);
    },
    () => {
      const ev = new Event("Xx", { bubbles: true, cancelable: false, sweet: "x" });
      eq(ev.type, "Xx"); eq(ev.bubbles, true); eq(ev.cancelable, false); eq(ev.sweet, undefined);
    },
    () => {
      const called = [];
      const ev = new Event("Xx", {
        get cancelable() { called.push("cancelable"); return false; },
        get bubbles() { called.push("bubbles"); return true; },
        get sweet() { called.push("sweet"); return "x"; },
      });
      arrEq(called, ["bubbles", "cancelable"]);
      eq(ev.type, "Xx"); eq(ev.bubbles, true); eq(ev.cancelable, false); eq(ev.sweet, undefined);
    },
    () => {
      const ev = new CustomEvent("$", { detail: 54, sweet: "x", sweet2: "x", cancelable: true });
      eq(ev.type, "$"); eq(ev.bubbles, false); eq(ev.cancelable, true); eq(ev.sweet, undefined); eq(ev.detail, 54);
    },
  ];
  if (steps.length !== DATA[F].count) throw new Error("Event-constructors: step count");
  steps.forEach((fn, i) => add(F, i === 0 ? title : `${title} ${i}`, fn));
}

// CustomEvent
{
  const [a, b, c] = DATA.CustomEvent;
  add("CustomEvent", a, () => {
    const target = new EventTarget();
    let type = null;
    target.addEventListener("foo", (e) => (type = e.type), true);
    target.dispatchEvent(new CustomEvent("foo", { bubbles: true, cancelable: true }));
    eq(type, "foo");
  });
  add("CustomEvent", b, () => throwsJs(TypeError, () => new CustomEvent("foo").initCustomEvent()));
  add("CustomEvent", c, () => {
    const e = new CustomEvent("foo");
    eq(e.type, "foo"); no(e.bubbles); no(e.cancelable); eq(e.detail, null);
  });
}

// Event-cancelBubble (its last case dispatches at the global: not here)
{
  const [a, b, c, d, e] = DATA["Event-cancelBubble"];
  const F = "Event-cancelBubble";
  add(F, a, () => no(new Event("foo").cancelBubble));
  add(F, b, () => {
    for (const bubbles of [true, false]) {
      const ev = new Event("foo", { bubbles, cancelable: false });
      ev.cancelBubble = true;
      ev.initEvent("foo", bubbles, false);
      no(ev.cancelBubble, `bubbles=${bubbles}`);
    }
  });
  add(F, c, () => {
    const ev = new Event("foo");
    ev.stopPropagation();
    yes(ev.cancelBubble);
  });
  add(F, d, () => {
    const ev = new Event("foo");
    ev.stopImmediatePropagation();
    yes(ev.cancelBubble);
  });
  add(F, e, () => {
    const ev = new Event("foo");
    ev.stopPropagation();
    ev.cancelBubble = false;
    yes(ev.cancelBubble);
  });
}

// Event-constants (through WPT's dom/constants.js testConstants)
{
  const C = DATA["Event-constants"];
  const objects = [Event, Event.prototype];
  C.objects.forEach((desc, i) => {
    add("Event-constants", `Constants for ${C.what} on ${desc}.`, () => {
      for (const [name, value] of C.constants) {
        yes(name in objects[i], `has ${name}`);
        eq(objects[i][name], value, name);
      }
    });
  });
}

// Event-defaultPrevented: the cases share one event, in order.
{
  const N = DATA["Event-defaultPrevented"];
  const F = "Event-defaultPrevented";
  let ev;
  add(F, N[0], () => {
    ev = new Event("foo", { bubbles: true, cancelable: false });
    eq(ev.defaultPrevented, false);
  });
  add(F, N[1], () => {
    eq(ev.cancelable, false);
    ev.preventDefault();
    eq(ev.cancelable, false);
    eq(ev.defaultPrevented, false);
  });
  add(F, N[2], () => {
    ev.returnValue = false;
    eq(ev.cancelable, false);
    eq(ev.defaultPrevented, false);
  });
  add(F, N[3], () => {
    ev = new Event("foo", { bubbles: true, cancelable: true });
    ev.preventDefault();
    eq(ev.cancelable, true);
    eq(ev.defaultPrevented, true);
  });
  add(F, N[4], () => {
    ev.returnValue = false;
    eq(ev.cancelable, true);
    eq(ev.defaultPrevented, true);
  });
  add(F, N[5], () => {
    ev.initEvent("foo", true, true);
    eq(ev.bubbles, true); eq(ev.cancelable, true); eq(ev.defaultPrevented, false);
  });
}

{
  const [a, b] = DATA["Event-defaultPrevented-after-dispatch"];
  const F = "Event-defaultPrevented-after-dispatch";
  const prevented = (how) => () => {
    const target = new EventTarget();
    const evt = new Event("foo", { bubbles: true, cancelable: true });
    let during = null;
    target.addEventListener("foo", (e) => {
      if (how === "returnValue") e.returnValue = false;
      else e.preventDefault();
      during = e.defaultPrevented;
    }, true);
    target.dispatchEvent(evt);
    eq(during, true, "during dispatch");
    yes(evt.defaultPrevented, "after dispatch");
    eq(evt.target, target);
    eq(evt.srcElement, target);
  };
  add(F, a, prevented("preventDefault"));
  add(F, b, prevented("returnValue"));
}

{
  const [custom, plain] = DATA["Event-init-while-dispatching"];
  const F = "Event-init-while-dispatching";
  const reinit = (make, init, checks) => () => {
    const e = make();
    let called = false;
    const target = new EventTarget();
    target.addEventListener("type", () => {
      called = true;
      init(e);
      checks(e);
    });
    eq(target.dispatchEvent(e), true);
    yes(called);
  };
  const plainChecks = (e) => {
    eq(e.bubbles, false); eq(e.cancelable, false); eq(e.type, "type");
  };
  add(F, custom, reinit(() => new CustomEvent("type"), (e) => e.initCustomEvent("type2", true, true, 1), (e) => {
    eq(e.detail, null);
    plainChecks(e);
  }));
  add(F, plain, reinit(() => new Event("type"), (e) => e.initEvent("type2", true, true), plainChecks));
}

// Event-initEvent
{
  const I = DATA["Event-initEvent"];
  const F = "Event-initEvent";
  for (const bubbles of I.booleans) {
    for (const cancelable of I.booleans) {
      add(F, `Properties of initEvent(type, ${bubbles}, ${cancelable})`, () => {
        const e = new Event("");
        e.initEvent("type", bubbles, cancelable);
        eq(e.defaultPrevented, false); eq(e.returnValue, true); eq(e.isTrusted, false);
        eq(e.target, null); eq(e.srcElement, null); eq(e.type, "type");
        eq(e.bubbles, bubbles); eq(e.cancelable, cancelable);
      });
    }
  }
  const [many, manyNoType, during, stopFlag, stopNowFlag, propagation, mandatory, defaults] = I.names;
  const twice = (readType) => () => {
    const e = new Event("");
    e.initEvent("type 1", true, false);
    if (readType) eq(e.type, "type 1");
    eq(e.bubbles, true); eq(e.cancelable, false);
    e.initEvent("type 2", false, true);
    eq(e.type, "type 2"); eq(e.bubbles, false); eq(e.cancelable, true);
  };
  add(F, many, twice(true));
  add(F, manyNoType, twice(false));
  const whileDispatching = (first) => () => {
    const e = new Event("");
    e.initEvent("type", false, false);
    const target = new EventTarget();
    let ran = false;
    target.addEventListener("type", () => {
      ran = true;
      e.initEvent(first, true, true);
      eq(e.type, "type"); eq(e.bubbles, false); eq(e.cancelable, false);
    }, false);
    eq(target.dispatchEvent(e), true);
    yes(ran);
  };
  add(F, during, whileDispatching("fail"));
  add(F, propagation, whileDispatching("type2"));
  const unsets = (stop, checkFlag) => () => {
    const e = new Event("");
    e[stop]();
    e.initEvent("type", false, false);
    const target = new EventTarget();
    let called = false;
    target.addEventListener("type", () => (called = true), false);
    if (checkFlag) no(e.cancelBubble);
    yes(target.dispatchEvent(e));
    yes(called);
  };
  add(F, stopFlag, unsets("stopPropagation", true));
  add(F, stopNowFlag, unsets("stopImmediatePropagation", false));
  add(F, mandatory, () => throwsJs(TypeError, () => new Event("").initEvent()));
  add(F, defaults, () => {
    const e = new Event("");
    e.initEvent("type");
    eq(e.type, "type"); no(e.bubbles); no(e.cancelable);
  });
}

add("Event-isTrusted", DATA["Event-isTrusted"].title, () => {
  const d1 = Object.getOwnPropertyDescriptor(new Event("x"), "isTrusted");
  ne(d1, undefined);
  eq(typeof d1.get, "function");
  const d2 = Object.getOwnPropertyDescriptor(new Event("x"), "isTrusted");
  ne(d2, undefined);
  eq(d1.get, d2.get);
});

// Event-propagation-EventTarget: one target, events prepared as the table says.
{
  const target = new EventTarget();
  const prepared = {};
  const make = () => new Event("foo", { bubbles: true, cancelable: false });
  for (const [desc, how, expected] of DATA["Event-propagation-EventTarget"]) {
    add("Event-propagation-EventTarget", desc, () => {
      const [first, then] = how.split("+");
      let ev = prepared[first] || make();
      if (!then) {
        if (first === "cancelBubble") ev.cancelBubble = true;
        else if (first !== "fresh") ev[first]();
      } else ev.initEvent("foo", true, false);
      prepared[first] = ev;
      let called = false;
      const cb = () => (called = true);
      target.addEventListener("foo", cb);
      try {
        target.dispatchEvent(ev);
        eq(called, expected, "propagation flag");
        target.dispatchEvent(ev);
        eq(called, true, "after the first dispatch");
      } finally {
        target.removeEventListener("foo", cb);
      }
    });
  }
}

{
  const N = DATA["Event-returnValue"];
  const F = "Event-returnValue";
  add(F, N[0], () => yes(new Event("foo").returnValue));
  const set = (cancelable, how, expected) => () => {
    const ev = new Event("foo", { cancelable });
    eq(ev.cancelable, cancelable);
    if (how === "prevent") ev.preventDefault();
    else ev.returnValue = false;
    eq(ev.cancelable, cancelable);
    eq(ev.returnValue, expected);
  };
  add(F, N[1], set(false, "prevent", true));
  add(F, N[2], set(false, "returnValue", true));
  add(F, N[3], set(true, "prevent", false));
  add(F, N[4], set(true, "returnValue", false));
  add(F, N[5], () => {
    const ev = new Event("foo");
    ev.returnValue = false;
    ev.initEvent("foo", true, true);
    yes(ev.bubbles); yes(ev.cancelable); yes(ev.returnValue);
  });
  add(F, N[6], () => {
    const ev = new Event("foo", { cancelable: true });
    ev.preventDefault();
    ev.returnValue = true;
    yes(ev.defaultPrevented);
    no(ev.returnValue);
  });
}

add("Event-stopImmediatePropagation", DATA["Event-stopImmediatePropagation"].title, () => {
  const target = new EventTarget();
  let times = 0;
  let flag = null;
  target.addEventListener("test", (e) => {
    ++times;
    e.stopImmediatePropagation();
    flag = e.cancelBubble;
  });
  target.addEventListener("test", () => ++times);
  target.dispatchEvent(new Event("test"));
  eq(flag, true, "stop propagation flag");
  eq(times, DATA["Event-stopImmediatePropagation"].calls);
});

// Event-subclasses-constructors
{
  const S = DATA["Event-subclasses-constructors"];
  const ifaces = {
    Event,
    SubclassedEvent: class SubclassedEvent extends Event {
      constructor(name, props) {
        super(name, props);
        this.customProp = props && typeof props == "object" && "customProp" in props ? props.customProp : 5;
      }
      get fixedProp() {
        return 17;
      }
    },
  };
  const props = (iface, event, defaults) => {
    yes(event instanceof ifaces[iface]);
    for (const [p, d, other] of S.expected[iface].properties) {
      yes(p in event, p);
      eq(event[p], defaults ? d : other, p);
    }
    if (S.expected[iface].parent) props(S.expected[iface].parent, event, defaults);
  };
  const fill = (iface, dict, col) => {
    if (S.expected[iface].parent) fill(S.expected[iface].parent, dict, col);
    for (const p of S.expected[iface].properties) dict[p[0]] = p[col];
    return dict;
  };
  for (const iface of Object.keys(S.expected)) {
    const args = [
      [], ["type", undefined], ["type", null], ["type", {}],
      ["type", Object.fromEntries(S.expected[iface].properties.map((p) => [p[0], p[1]]))],
      ["type", fill(iface, {}, 2)],
    ];
    S.variants.forEach((variant, i) => {
      add("Event-subclasses-constructors", `${iface} constructor (${variant})`, () => {
        const event = i === 0 ? new ifaces[iface]("type") : new ifaces[iface](...args[i]);
        props(iface, event, i !== 5);
      });
    });
  }
}

add("Event-type", DATA["Event-type"][0], () => eq(new Event("bar").type, "bar"));
add("Event-type-empty", DATA["Event-type-empty"][0], () => {
  const e = new Event("");
  eq(e.type, ""); eq(e.bubbles, false); eq(e.cancelable, false);
  const target = new EventTarget();
  let handled = false;
  target.addEventListener("", () => (handled = true));
  yes(target.dispatchEvent(e));
  yes(handled);
});

