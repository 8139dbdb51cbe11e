// AbortController and AbortSignal (DOM standard), with AbortSignal.abort,
// .timeout (over the host clock) and .any.
(function (web) {
  const { install, EventTarget, Event } = web;

  const abortError = () => new DOMException("This operation was aborted", "AbortError");

  let creating = false;
  class AbortSignal extends EventTarget {
    #aborted = false;
    #reason = undefined;
    // AbortSignal.any(): a dependent signal follows the signals it was made
    // from, always the non-dependent ones (the DOM standard's flattening), so
    // an abort reaches every dependent in the order they were made.
    #dependent = false;
    #sources = [];
    #dependents = [];
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
      signal.#aborted = true;
      signal.#reason = reason === undefined ? abortError() : reason;
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
      const done = list.find((s) => s.#aborted);
      if (done) {
        signal.#aborted = true;
        signal.#reason = done.#reason;
        return signal;
      }
      signal.#dependent = true;
      for (const source of list) {
        for (const s of source.#dependent ? source.#sources : [source]) {
          if (signal.#sources.includes(s)) continue;
          signal.#sources.push(s);
          s.#dependents.push(signal);
        }
      }
      return signal;
    }
    // Mark this signal and its dependents aborted first, then fire the events:
    // a listener of any of them sees all of them aborted.
    #signalAbort(reason) {
      if (this.#aborted) return;
      this.#aborted = true;
      this.#reason = reason === undefined ? abortError() : reason;
      const followers = [];
      for (const d of this.#dependents) {
        if (d.#aborted) continue;
        d.#aborted = true;
        d.#reason = this.#reason;
        followers.push(d);
      }
      this.#dependents = [];
      for (const s of [this, ...followers]) s.dispatchEvent(web.trustedEvent("abort"));
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
