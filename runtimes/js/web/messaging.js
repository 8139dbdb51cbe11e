// MessageChannel, MessagePort and MessageEvent (HTML), within the one realm an
// agent has: a port posts a structured clone of its message to its entangled
// port, which receives it as a task (a timer of 0 ms) once started. Setting
// `onmessage` starts a port; `addEventListener` needs `start()`, as in browsers.
// A port can be transferred (structuredClone, postMessage): the original is
// left closed and a new port takes its place in the pair.
(function (web) {
  const { install, EventTarget, Event } = web;

  class MessageEvent extends Event {
    #data;
    #origin;
    #lastEventId;
    #source;
    #ports;
    constructor(type, init = undefined) {
      super(type, init);
      const d = init === undefined || init === null ? {} : init;
      if (typeof d !== "object" && typeof d !== "function") {
        throw new TypeError("The \"eventInitDict\" argument must be an object");
      }
      this.#data = d.data === undefined ? null : d.data;
      this.#origin = d.origin === undefined ? "" : String(d.origin);
      this.#lastEventId = d.lastEventId === undefined ? "" : String(d.lastEventId);
      this.#source = d.source === undefined ? null : d.source;
      this.#ports = Object.freeze(d.ports === undefined ? [] : Array.from(d.ports));
    }
    get data() {
      return this.#data;
    }
    get origin() {
      return this.#origin;
    }
    get lastEventId() {
      return this.#lastEventId;
    }
    get source() {
      return this.#source;
    }
    get ports() {
      return this.#ports;
    }
  }

  let creating = false;
  let pair;
  class MessagePort extends EventTarget {
    #other = null; // the entangled port, or null once either end is closed
    #started = false;
    #closed = false;
    #detached = false;
    #queue = [];
    constructor() {
      if (!creating) throw new TypeError("Illegal constructor");
      super();
      creating = false;
    }
    postMessage(message, transfer = undefined) {
      if (arguments.length === 0) throw new TypeError("The \"message\" argument must be specified");
      // A sequence, or StructuredSerializeOptions holding one.
      const list = Array.isArray(transfer) || typeof transfer !== "object" || transfer === null ? transfer : transfer.transfer;
      const items = list === undefined || list === null ? [] : Array.from(list);
      if (items.includes(this)) throw new DOMException("A port cannot be transferred through itself.", "DataCloneError");
      const ports = items.filter((p) => p instanceof MessagePort);
      const copy = web.structuredClone([message, ports], { transfer: items });
      const target = this.#other;
      if (target === null) return;
      target.#queue.push(copy);
      if (target.#started) target.#deliverSoon();
    }
    start() {
      if (this.#started || this.#closed) return;
      this.#started = true;
      if (this.#queue.length) this.#deliverSoon();
    }
    close() {
      this.#closed = true;
      this.#queue.length = 0;
      if (this.#other !== null) this.#other.#other = null;
      this.#other = null;
    }
    #deliverSoon() {
      web.setTimeout(() => {
        const next = this.#queue.shift();
        if (next === undefined || this.#closed) return;
        const [data, ports] = next;
        this.dispatchEvent(new MessageEvent("message", { data, ports }));
      }, 0);
    }
    static {
      pair = () => {
        creating = true;
        const a = new MessagePort();
        creating = true;
        const b = new MessagePort();
        a.#other = b;
        b.#other = a;
        return [a, b];
      };
      // A transfer in two steps, so that a clone that fails leaves the port as it was:
      // a new port for the clone to refer to, then the move into the pair.
      web.portShell = (port) => {
        if (port.#detached) throw new DOMException("A detached MessagePort could not be cloned.", "DataCloneError");
        creating = true;
        return new MessagePort();
      };
      web.portMove = (port, moved) => {
        moved.#other = port.#other;
        moved.#queue = port.#queue;
        if (moved.#other !== null) moved.#other.#other = moved;
        port.#other = null;
        port.#closed = port.#detached = true;
        port.#queue = [];
      };
    }
  }
  web.MessagePort = MessagePort;
  web.defineHandler(MessagePort.prototype, "messageerror");
  // Setting onmessage starts the port (HTML: the port message queue is enabled).
  web.defineHandler(MessagePort.prototype, "message");
  const onmessage = Object.getOwnPropertyDescriptor(MessagePort.prototype, "onmessage");
  const setter = {
    set onmessage(fn) {
      onmessage.set.call(this, fn);
      this.start();
    },
  };
  const set = Object.getOwnPropertyDescriptor(setter, "onmessage").set;
  Object.defineProperty(set, "name", { value: "set onmessage" });
  Object.defineProperty(MessagePort.prototype, "onmessage", { ...onmessage, set });

  class MessageChannel {
    #port1;
    #port2;
    constructor() {
      [this.#port1, this.#port2] = pair();
    }
    get port1() {
      return this.#port1;
    }
    get port2() {
      return this.#port2;
    }
  }

  install("MessageEvent", MessageEvent);
  install("MessagePort", MessagePort);
  install("MessageChannel", MessageChannel);
});
