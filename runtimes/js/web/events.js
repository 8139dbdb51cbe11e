// Event, CustomEvent and EventTarget (DOM standard, without a tree: a target
// has no parent, so dispatch is the at-target phase only: capture listeners,
// then the others).
(function (web) {
  const { install } = web;

  const NONE = 0;
  const AT_TARGET = 2;
  const PHASES = { NONE: 0, CAPTURING_PHASE: 1, AT_TARGET: 2, BUBBLING_PHASE: 3 };

  // A WebIDL dictionary argument: undefined and null are empty, another primitive a TypeError.
  const dictionary = (value, what) => {
    if (value === undefined || value === null) return {};
    if (typeof value !== "object" && typeof value !== "function") throw new TypeError(`The "${what}" argument must be an object`);
    return value;
  };

  let trustedGetter;
  class Event {
    #type;
    #bubbles;
    #cancelable;
    #composed;
    #canceled = false;
    #stop = false;
    #stopNow = false;
    #target = null;
    #current = null;
    #phase = NONE;
    #passive = false;
    #dispatching = false;
    #trusted = false;
    #timeStamp;
    constructor(type, init = undefined) {
      if (arguments.length === 0) throw new TypeError("The \"type\" argument must be specified");
      this.#type = String(type);
      const d = dictionary(init, "eventInitDict");
      this.#bubbles = Boolean(d.bubbles);
      this.#cancelable = Boolean(d.cancelable);
      this.#composed = Boolean(d.composed);
      this.#timeStamp = performance.now();
      // isTrusted is [LegacyUnforgeable]: an own, non-configurable accessor of
      // every event, all sharing one getter.
      Object.defineProperty(this, "isTrusted", { get: trustedGetter, enumerable: true, configurable: false });
    }
    get type() {
      return this.#type;
    }
    get bubbles() {
      return this.#bubbles;
    }
    get cancelable() {
      return this.#cancelable;
    }
    get composed() {
      return this.#composed;
    }
    get defaultPrevented() {
      return this.#canceled;
    }
    get returnValue() {
      return !this.#canceled;
    }
    set returnValue(value) {
      if (!value) this.#cancel();
    }
    get target() {
      return this.#target;
    }
    get srcElement() {
      return this.#target;
    }
    get currentTarget() {
      return this.#current;
    }
    get eventPhase() {
      return this.#phase;
    }
    get isTrusted() {
      return this.#trusted;
    }
    get timeStamp() {
      return this.#timeStamp;
    }
    get cancelBubble() {
      return this.#stop;
    }
    set cancelBubble(value) {
      if (value) this.#stop = true;
    }
    composedPath() {
      return this.#dispatching && this.#current ? [this.#current] : [];
    }
    preventDefault() {
      this.#cancel();
    }
    // The canceled flag is set only for a cancelable event outside a passive listener.
    #cancel() {
      if (this.#cancelable && !this.#passive) this.#canceled = true;
    }
    stopPropagation() {
      this.#stop = true;
    }
    stopImmediatePropagation() {
      this.#stop = true;
      this.#stopNow = true;
    }
    initEvent(type, bubbles = false, cancelable = false) {
      if (arguments.length === 0) throw new TypeError("The \"type\" argument must be specified");
      if (this.#dispatching) return;
      this.#stop = this.#stopNow = this.#canceled = this.#trusted = false;
      this.#target = null;
      this.#type = String(type);
      this.#bubbles = Boolean(bubbles);
      this.#cancelable = Boolean(cancelable);
    }
    static {
      trustedGetter = Object.getOwnPropertyDescriptor(Event.prototype, "isTrusted").get;
      // An event the platform itself fires (AbortSignal's abort) is trusted.
      web.trustedEvent = (type) => {
        const event = new Event(type);
        event.#trusted = true;
        return event;
      };
      web.eventDispatching = (event) => event.#dispatching;
      // EventTarget drives a dispatch through these (module-private) hooks.
      web.eventStart = (event, target) => {
        if (event.#dispatching) throw new DOMException("The event is already being dispatched.", "InvalidStateError");
        event.#dispatching = true;
        event.#target = target;
        event.#current = target;
        event.#phase = AT_TARGET;
      };
      web.eventListener = (event, passive) => {
        event.#passive = passive;
        return !event.#stopNow;
      };
      web.eventEnd = (event) => {
        event.#dispatching = false;
        event.#passive = false;
        event.#current = null;
        event.#phase = NONE;
        event.#stop = false;
        event.#stopNow = false;
        return !event.#canceled;
      };
    }
  }
  const constant = (value) => ({ value, enumerable: true, writable: false, configurable: false });
  for (const [name, value] of Object.entries(PHASES)) {
    Object.defineProperty(Event, name, constant(value));
    Object.defineProperty(Event.prototype, name, constant(value));
  }

  class CustomEvent extends Event {
    #detail;
    constructor(type, init = undefined) {
      super(type, init);
      const d = dictionary(init, "eventInitDict");
      this.#detail = d.detail !== undefined ? d.detail : null;
    }
    get detail() {
      return this.#detail;
    }
    initCustomEvent(type, bubbles = false, cancelable = false, detail = null) {
      if (arguments.length === 0) throw new TypeError("The \"type\" argument must be specified");
      if (web.eventDispatching(this)) return;
      this.initEvent(type, bubbles, cancelable);
      this.#detail = detail;
    }
  }

  // AddEventListenerOptions, read as WebIDL does: capture, once, passive, signal.
  // (A union with boolean: any other primitive but undefined and null is a capture flag.)
  const isDictionary = (v) => v === undefined || v === null || typeof v === "object" || typeof v === "function";
  function flags(options) {
    if (!isDictionary(options)) return { capture: Boolean(options), once: false, passive: false, signal: undefined };
    const o = dictionary(options, "options");
    const f = { capture: Boolean(o.capture), once: Boolean(o.once), passive: Boolean(o.passive), signal: o.signal };
    if (f.signal !== undefined && !(f.signal instanceof web.AbortSignal)) {
      throw new TypeError("The \"signal\" option must be an AbortSignal");
    }
    return f;
  }
  // removeEventListener's EventListenerOptions has only capture.
  const captureOf = (options) => Boolean(isDictionary(options) ? dictionary(options, "options").capture : options);

  // An error thrown by a listener must not stop the other listeners: it is
  // reported on stderr, as a browser reports it to the console.
  function report(e) {
    const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    web.native.write(2, `Uncaught (in event listener) ${text}\n`);
  }

  function invoke(target, l, event) {
    if (typeof l.callback === "function") return void l.callback.call(target, event);
    // An object listener's handleEvent is looked up at every call.
    const handle = l.callback.handleEvent;
    if (typeof handle !== "function") throw new TypeError("The listener's handleEvent is not a function");
    handle.call(l.callback, event);
  }

  class EventTarget {
    #listeners = new Map(); // type -> [{callback, capture, once, passive, removed}]
    addEventListener(type, callback, options = undefined) {
      type = String(type);
      if (callback !== null && callback !== undefined && typeof callback !== "function" && typeof callback !== "object") {
        throw new TypeError("The \"listener\" argument must be a function or an object");
      }
      const f = flags(options);
      if (callback === null || callback === undefined) return;
      if (f.signal && f.signal.aborted) return;
      let list = this.#listeners.get(type);
      if (!list) this.#listeners.set(type, (list = []));
      if (list.some((l) => l.callback === callback && l.capture === f.capture)) return;
      const entry = { callback, capture: f.capture, once: f.once, passive: f.passive, removed: false };
      list.push(entry);
      if (f.signal) f.signal.addEventListener("abort", () => this.removeEventListener(type, callback, f.capture));
    }
    removeEventListener(type, callback, options = undefined) {
      type = String(type);
      const capture = captureOf(options);
      const list = this.#listeners.get(type);
      if (!list) return;
      const at = list.findIndex((l) => l.callback === callback && l.capture === capture);
      if (at >= 0) {
        list[at].removed = true;
        list.splice(at, 1);
      }
    }
    dispatchEvent(event) {
      if (!(event instanceof Event)) throw new TypeError("The \"event\" argument must be an instance of Event");
      web.eventStart(event, this);
      try {
        // Listeners added during the dispatch wait for the next one; at the
        // target, capture listeners run before the others.
        const all = this.#listeners.get(event.type) || [];
        for (const l of [...all.filter((x) => x.capture), ...all.filter((x) => !x.capture)]) {
          if (l.removed) continue;
          if (!web.eventListener(event, l.passive)) break;
          if (l.once) this.removeEventListener(event.type, l.callback, l.capture);
          try {
            invoke(this, l, event);
          } catch (e) {
            report(e);
          }
          web.eventListener(event, false);
        }
      } finally {
        web.eventListener(event, false);
      }
      return web.eventEnd(event);
    }
  }

  // `on<type>` attributes (signal.onabort): one listener slot per name.
  web.defineHandler = (proto, type) => {
    defineHandler(proto, type);
    // An accessor's functions are named "get onabort" and "set onabort".
    const d = Object.getOwnPropertyDescriptor(proto, `on${type}`);
    Object.defineProperty(d.get, "name", { value: `get on${type}` });
    Object.defineProperty(d.set, "name", { value: `set on${type}` });
  };
  const defineHandler = (proto, type) => {
    const slot = new WeakMap();
    Object.defineProperty(proto, `on${type}`, {
      configurable: true,
      enumerable: true,
      get() {
        return slot.has(this) ? slot.get(this).fn : null;
      },
      set(fn) {
        const prev = slot.get(this);
        if (prev) this.removeEventListener(type, prev.listener);
        if (typeof fn !== "function") return void slot.delete(this);
        const listener = (e) => fn.call(this, e);
        slot.set(this, { fn, listener });
        this.addEventListener(type, listener);
      },
    });
  };

  web.Event = Event;
  web.EventTarget = EventTarget;
  // isTrusted is [LegacyUnforgeable]: it cannot be redefined.
  const trusted = Object.getOwnPropertyDescriptor(Event.prototype, "isTrusted");
  Object.defineProperty(Event.prototype, "isTrusted", { ...trusted, enumerable: true, configurable: false });
  install("Event", Event);
  install("CustomEvent", CustomEvent);
  install("EventTarget", EventTarget);
});
