// Event, CustomEvent and EventTarget (DOM standard, without a tree: a target
// has no parent, so dispatch is the at-target phase only).
(function (web) {
  const { install } = web;

  const NONE = 0;
  const AT_TARGET = 2;

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
    constructor(type, init = {}) {
      if (arguments.length === 0) throw new TypeError("The \"type\" argument must be specified");
      this.#type = String(type);
      this.#bubbles = Boolean(init && init.bubbles);
      this.#cancelable = Boolean(init && init.cancelable);
      this.#composed = Boolean(init && init.composed);
      this.#timeStamp = performance.now();
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
      return this.#cancelable && this.#canceled;
    }
    get returnValue() {
      return !this.defaultPrevented;
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
      if (!this.#passive) this.#canceled = true;
    }
    stopPropagation() {
      this.#stop = true;
    }
    stopImmediatePropagation() {
      this.#stop = true;
      this.#stopNow = true;
    }
    static {
      // An event the platform itself fires (AbortSignal's abort) is trusted.
      web.trustedEvent = (type) => {
        const event = new Event(type);
        event.#trusted = true;
        return event;
      };
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
        return !event.#canceled || !event.#cancelable;
      };
    }
  }
  Object.defineProperties(Event, {
    NONE: { value: 0, enumerable: true },
    CAPTURING_PHASE: { value: 1, enumerable: true },
    AT_TARGET: { value: 2, enumerable: true },
    BUBBLING_PHASE: { value: 3, enumerable: true },
  });

  class CustomEvent extends Event {
    #detail;
    constructor(type, init = {}) {
      super(type, init);
      this.#detail = init && init.detail !== undefined ? init.detail : null;
    }
    get detail() {
      return this.#detail;
    }
  }

  function flags(options) {
    if (typeof options === "boolean") return { capture: options, once: false, passive: false, signal: undefined };
    const o = options || {};
    return { capture: Boolean(o.capture), once: Boolean(o.once), passive: Boolean(o.passive), signal: o.signal };
  }

  // An error thrown by a listener must not stop the other listeners: it is
  // reported on stderr, as a browser reports it to the console.
  function report(e) {
    const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    web.native.write(2, `Uncaught (in event listener) ${text}\n`);
  }

  class EventTarget {
    #listeners = new Map(); // type -> [{callback, capture, once, passive, removed}]
    addEventListener(type, callback, options = undefined) {
      if (callback === null || callback === undefined) return;
      if (typeof callback !== "function" && typeof callback !== "object") {
        throw new TypeError("The \"listener\" argument must be a function or an object");
      }
      const f = flags(options);
      if (f.signal && f.signal.aborted) return;
      type = String(type);
      let list = this.#listeners.get(type);
      if (!list) this.#listeners.set(type, (list = []));
      if (list.some((l) => l.callback === callback && l.capture === f.capture)) return;
      const entry = { callback, capture: f.capture, once: f.once, passive: f.passive, removed: false };
      list.push(entry);
      if (f.signal) f.signal.addEventListener("abort", () => this.removeEventListener(type, callback, f.capture));
    }
    removeEventListener(type, callback, options = undefined) {
      const capture = flags(options).capture;
      const list = this.#listeners.get(String(type));
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
        // Listeners added during the dispatch wait for the next one.
        for (const l of (this.#listeners.get(event.type) || []).slice()) {
          if (l.removed) continue;
          if (!web.eventListener(event, l.passive)) break;
          if (l.once) this.removeEventListener(event.type, l.callback, l.capture);
          try {
            if (typeof l.callback === "function") l.callback.call(this, event);
            else if (typeof l.callback.handleEvent === "function") l.callback.handleEvent(event);
          } catch (e) {
            report(e);
          }
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
