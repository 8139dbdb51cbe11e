// AbortController and AbortSignal (DOM standard), with AbortSignal.abort,
// .timeout (over the host clock) and .any.
(function (web) {
  const { install, EventTarget, Event } = web;

  const abortError = () => new DOMException("This operation was aborted", "AbortError");

  let creating = false;
  class AbortSignal extends EventTarget {
    #aborted = false;
    #reason = undefined;
    constructor() {
      if (!creating) throw new TypeError("Illegal constructor");
      super();
      creating = false;
    }
    get aborted() {
      return this.#aborted;
    }
    get reason() {
      return this.#reason;
    }
    throwIfAborted() {
      if (this.#aborted) throw this.#reason;
    }
    static abort(reason = undefined) {
      const signal = newSignal();
      signal.#signalAbort(reason);
      return signal;
    }
    static timeout(ms) {
      // [EnforceRange]: not a finite number is a TypeError; node makes a negative one a RangeError.
      const n = Number(ms);
      if (!Number.isFinite(n)) throw new TypeError(`The "delay" argument must be a finite number: ${String(ms)}`);
      if (n < 0) throw new RangeError(`The value of "delay" is out of range: ${ms}`);
      const signal = newSignal();
      web.setTimeout(() => {
        signal.#signalAbort(new DOMException("The operation was aborted due to timeout", "TimeoutError"));
      }, n);
      return signal;
    }
    static any(signals) {
      const list = Array.from(signals);
      const signal = newSignal();
      const done = list.find((s) => s.aborted);
      if (done) {
        signal.#signalAbort(done.reason);
        return signal;
      }
      for (const source of list) {
        source.addEventListener("abort", () => signal.#signalAbort(source.reason), { once: true });
      }
      return signal;
    }
    #signalAbort(reason) {
      if (this.#aborted) return;
      this.#aborted = true;
      this.#reason = reason === undefined ? abortError() : reason;
      this.dispatchEvent(new Event("abort"));
    }
    static {
      web.signalAbort = (signal, reason) => signal.#signalAbort(reason);
    }
  }
  web.defineHandler(AbortSignal.prototype, "abort");

  function newSignal() {
    creating = true;
    return new AbortSignal();
  }

  class AbortController {
    #signal = newSignal();
    get signal() {
      return this.#signal;
    }
    abort(reason = undefined) {
      web.signalAbort(this.#signal, reason);
    }
  }

  web.AbortSignal = AbortSignal;
  web.abortError = abortError;
  web.AbortController = AbortController;
  install("AbortController", AbortController);
  install("AbortSignal", AbortSignal);
});
