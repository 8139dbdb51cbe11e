// ReadableStream after the Streams standard, default (non-byte) streams only:
// an underlying source's start/pull/cancel, the default controller and
// reader, tee(), async iteration and ReadableStream.from. Byte streams
// (type: "bytes", BYOB readers), WritableStream and TransformStream are not
// here. The state of a stream lives in one plain record shared by the
// stream, its controller and its reader, so the steps below read as the
// standard's abstract operations over that record.
(function (web) {
  const { install } = web;
  const KEY = Symbol("internal");

  const deferred = () => {
    const d = {};
    d.promise = new Promise((resolve, reject) => {
      d.resolve = resolve;
      d.reject = reject;
    });
    return d;
  };
  // A rejection the standard marks as handled: no unhandled-rejection report.
  const quiet = (p) => (p.catch(() => {}), p);
  // The standard's "promise call": a throwing callback is a rejected promise.
  function promiseCall(fn, self, arg) {
    if (fn === undefined) return Promise.resolve();
    try {
      return Promise.resolve(fn.call(self, arg));
    } catch (e) {
      return Promise.reject(e);
    }
  }

  // ---- the stream record and its abstract operations ---------------------

  function newRecord() {
    return {
      state: "readable", // "closed" | "errored"
      storedError: undefined,
      disturbed: false,
      reader: null, // reader record: {closed: deferred, requests: [{chunk, close, error}]}
      queue: [], // [{chunk, size}]
      queueSize: 0,
      closeRequested: false,
      started: false,
      pulling: false,
      pullAgain: false,
      hwm: 1,
      size: () => 1,
      pull: null,
      cancel: null,
      controller: null,
    };
  }

  function canCloseOrEnqueue(s) {
    return !s.closeRequested && s.state === "readable";
  }

  function desiredSize(s) {
    if (s.state === "errored") return null;
    if (s.state === "closed") return 0;
    return s.hwm - s.queueSize;
  }

  function clearAlgorithms(s) {
    s.pull = null;
    s.cancel = null;
    s.size = () => 1;
  }

  function shouldCallPull(s) {
    if (!canCloseOrEnqueue(s) || !s.started) return false;
    if (s.reader && s.reader.requests.length > 0) return true;
    return desiredSize(s) > 0;
  }

  function callPullIfNeeded(s) {
    if (!shouldCallPull(s)) return;
    if (s.pulling) {
      s.pullAgain = true;
      return;
    }
    s.pulling = true;
    s.pull().then(
      () => {
        s.pulling = false;
        if (s.pullAgain) {
          s.pullAgain = false;
          callPullIfNeeded(s);
        }
      },
      (e) => errorStream(s, e),
    );
  }

  function closeStream(s) {
    s.state = "closed";
    const r = s.reader;
    if (!r) return;
    r.closed.resolve();
    const requests = r.requests.splice(0);
    for (const req of requests) req.close();
  }

  function errorStream(s, e) {
    if (s.state !== "readable") return;
    s.queue = [];
    s.queueSize = 0;
    clearAlgorithms(s);
    s.state = "errored";
    s.storedError = e;
    const r = s.reader;
    if (!r) return;
    r.closed.reject(e);
    quiet(r.closed.promise);
    const requests = r.requests.splice(0);
    for (const req of requests) req.error(e);
  }

  function enqueue(s, chunk) {
    if (!canCloseOrEnqueue(s)) throw new TypeError("Invalid state: Controller is already closed");
    if (s.reader && s.reader.requests.length > 0) {
      s.reader.requests.shift().chunk(chunk);
    } else {
      let size;
      try {
        size = Number(s.size(chunk));
        if (!(size >= 0) || size === Infinity) throw new RangeError("The chunk size must be a finite, non-negative number");
      } catch (e) {
        errorStream(s, e);
        throw e;
      }
      s.queue.push({ chunk, size });
      s.queueSize += size;
    }
    callPullIfNeeded(s);
  }

  function closeRequest(s) {
    if (!canCloseOrEnqueue(s)) throw new TypeError("Invalid state: Controller is already closed");
    s.closeRequested = true;
    if (s.queue.length === 0) {
      clearAlgorithms(s);
      closeStream(s);
    }
  }

  // One read, answered through the request's chunk/close/error steps.
  function readInto(s, req) {
    s.disturbed = true;
    if (s.state === "closed") return req.close();
    if (s.state === "errored") return req.error(s.storedError);
    if (s.queue.length > 0) {
      const { chunk, size } = s.queue.shift();
      s.queueSize = s.queue.length === 0 ? 0 : s.queueSize - size;
      if (s.closeRequested && s.queue.length === 0) {
        clearAlgorithms(s);
        closeStream(s);
      } else callPullIfNeeded(s);
      return req.chunk(chunk);
    }
    s.reader.requests.push(req);
    callPullIfNeeded(s);
  }

  function cancelStream(s, reason) {
    s.disturbed = true;
    if (s.state === "closed") return Promise.resolve();
    if (s.state === "errored") return Promise.reject(s.storedError);
    closeStream(s);
    s.queue = [];
    s.queueSize = 0;
    const cancel = s.cancel;
    clearAlgorithms(s);
    return (cancel ? cancel(reason) : Promise.resolve()).then(() => undefined);
  }

  function setUp(stream, s, source, strategy) {
    const hwm = strategy.highWaterMark === undefined ? 1 : Number(strategy.highWaterMark);
    if (Number.isNaN(hwm) || hwm < 0) throw new RangeError("The highWaterMark must be a non-negative number");
    s.hwm = hwm;
    if (strategy.size !== undefined) {
      if (typeof strategy.size !== "function") throw new TypeError("The strategy's size must be a function");
      const size = strategy.size;
      s.size = (chunk) => size(chunk);
    }
    const start = source.start;
    const pull = source.pull;
    const cancel = source.cancel;
    for (const [name, fn] of [["start", start], ["pull", pull], ["cancel", cancel]]) {
      if (fn !== undefined && typeof fn !== "function") throw new TypeError(`The underlying source's ${name} must be a function`);
    }
    const controller = new ReadableStreamDefaultController(KEY, s);
    s.controller = controller;
    s.pull = () => promiseCall(pull, source, controller);
    s.cancel = (reason) => promiseCall(cancel, source, reason);
    const started = start === undefined ? undefined : start.call(source, controller);
    Promise.resolve(started).then(
      () => {
        s.started = true;
        callPullIfNeeded(s);
      },
      (e) => errorStream(s, e),
    );
  }

  // ---- the classes ------------------------------------------------------------

  class ReadableStreamDefaultController {
    #s;
    constructor(...args) {
      const [key, s] = args; // a private key: length 0, as an interface without a constructor has
      if (key !== KEY) throw new TypeError("Illegal constructor");
      this.#s = s;
    }
    get desiredSize() {
      return desiredSize(this.#s);
    }
    enqueue(chunk = undefined) {
      enqueue(this.#s, chunk);
    }
    close() {
      closeRequest(this.#s);
    }
    error(e = undefined) {
      errorStream(this.#s, e);
    }
    get [Symbol.toStringTag]() {
      return "ReadableStreamDefaultController";
    }
  }

  class ReadableStreamDefaultReader {
    #s = null; // the stream's record while this reader holds the lock
    #r;
    constructor(stream) {
      const s = streamRecord(stream);
      if (s.reader) throw new TypeError("Invalid state: ReadableStream is locked");
      this.#r = { closed: deferred(), requests: [] };
      this.#s = s;
      s.reader = this.#r;
      if (s.state === "closed") this.#r.closed.resolve();
      else if (s.state === "errored") {
        this.#r.closed.reject(s.storedError);
        quiet(this.#r.closed.promise);
      }
    }
    get closed() {
      return this.#r.closed.promise;
    }
    read() {
      if (!this.#s) return Promise.reject(new TypeError("Invalid state: The reader is not attached to a stream"));
      const d = deferred();
      readInto(this.#s, {
        chunk: (value) => d.resolve({ value, done: false }),
        close: () => d.resolve({ value: undefined, done: true }),
        error: (e) => d.reject(e),
      });
      return d.promise;
    }
    cancel(reason = undefined) {
      if (!this.#s) return Promise.reject(new TypeError("Invalid state: The reader is not attached to a stream"));
      return cancelStream(this.#s, reason);
    }
    releaseLock() {
      const s = this.#s;
      if (!s) return;
      const released = () => new TypeError("Invalid state: Releasing reader");
      if (s.state === "readable") this.#r.closed.reject(released());
      else {
        this.#r.closed = deferred();
        this.#r.closed.reject(released());
      }
      quiet(this.#r.closed.promise);
      s.reader = null;
      this.#s = null;
      const requests = this.#r.requests.splice(0);
      for (const req of requests) req.error(released());
    }
    get [Symbol.toStringTag]() {
      return "ReadableStreamDefaultReader";
    }
  }

  // The async iterator of values(): one read at a time, in order.
  const AsyncIteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf(async function* () {}).prototype);
  const IteratorPrototype = Object.create(AsyncIteratorPrototype);
  function iterate(stream, preventCancel) {
    const reader = new ReadableStreamDefaultReader(stream);
    let ongoing = null;
    let finished = false;
    const nextSteps = () => {
      if (finished) return Promise.resolve({ value: undefined, done: true });
      return reader.read().then(
        (result) => {
          if (result.done) {
            finished = true;
            reader.releaseLock();
          }
          return result;
        },
        (e) => {
          finished = true;
          reader.releaseLock();
          throw e;
        },
      );
    };
    const returnSteps = (value) => {
      if (finished) return Promise.resolve({ done: true, value });
      finished = true;
      if (preventCancel) {
        reader.releaseLock();
        return Promise.resolve({ done: true, value });
      }
      const cancelled = reader.cancel(value);
      reader.releaseLock();
      return cancelled.then(() => ({ done: true, value }));
    };
    const it = Object.create(IteratorPrototype);
    it.next = () => {
      ongoing = ongoing ? ongoing.then(nextSteps, nextSteps) : nextSteps();
      return ongoing;
    };
    it.return = (value) => {
      const steps = () => returnSteps(value);
      return ongoing ? ongoing.then(steps, steps) : steps();
    };
    return it;
  }

  class ReadableStream {
    #s = newRecord();
    constructor(source = undefined, strategy = undefined) {
      source = source === undefined || source === null ? {} : source;
      strategy = strategy === undefined || strategy === null ? {} : strategy;
      if (typeof source !== "object" && typeof source !== "function") {
        throw new TypeError("The underlying source must be an object");
      }
      if (source.type !== undefined) {
        if (String(source.type) === "bytes") throw new TypeError("Byte streams (type: \"bytes\") are not supported in hugind");
        throw new TypeError(`The property 'source.type' is invalid. Received '${String(source.type)}'`);
      }
      setUp(this, this.#s, source, strategy);
    }
    get locked() {
      return this.#s.reader !== null;
    }
    cancel(reason = undefined) {
      if (this.#s.reader) return Promise.reject(new TypeError("Invalid state: ReadableStream is locked"));
      return cancelStream(this.#s, reason);
    }
    getReader(options = undefined) {
      const mode = options && options.mode;
      if (mode !== undefined) {
        if (String(mode) === "byob") throw new TypeError("BYOB readers are not supported in hugind");
        throw new TypeError(`The property 'options.mode' is invalid. Received '${String(mode)}'`);
      }
      return new ReadableStreamDefaultReader(this);
    }
    tee() {
      return tee(this);
    }
    values(options = undefined) {
      return iterate(this, Boolean(options && options.preventCancel));
    }
    [Symbol.asyncIterator](options = undefined) {
      return this.values(options);
    }
    pipeTo(destination, options = undefined) {
      return Promise.reject(new TypeError("pipeTo is not available in hugind: there is no WritableStream"));
    }
    pipeThrough(transform, options = undefined) {
      throw new TypeError("pipeThrough is not available in hugind: there is no TransformStream");
    }
    static from(items) {
      if (items instanceof ReadableStream) return items;
      if (items === null || items === undefined) throw new TypeError("ReadableStream.from: the argument must be iterable");
      const getAsync = items[Symbol.asyncIterator];
      const getSync = items[Symbol.iterator];
      let iterator;
      if (typeof getAsync === "function") iterator = getAsync.call(items);
      else if (typeof getSync === "function") {
        const sync = getSync.call(items);
        // A sync iterator's values may be promises: they are awaited, as for await does.
        iterator = {
          next: () => {
            const r = sync.next();
            return Promise.resolve(r.value).then((value) => ({ value, done: r.done }));
          },
          return: (v) => Promise.resolve(typeof sync.return === "function" ? sync.return(v) : { done: true }),
        };
      } else throw new TypeError("ReadableStream.from: the argument must be iterable");
      if (iterator === null || typeof iterator !== "object") throw new TypeError("The iterator is not an object");
      return new ReadableStream(
        {
          pull(controller) {
            return Promise.resolve(iterator.next()).then((r) => {
              if (r === null || typeof r !== "object") throw new TypeError("The iterator result is not an object");
              if (r.done) controller.close();
              else controller.enqueue(r.value);
            });
          },
          cancel(reason) {
            const ret = iterator.return;
            if (ret === undefined || ret === null) return undefined;
            return Promise.resolve(ret.call(iterator, reason)).then((r) => {
              if (r === null || typeof r !== "object") throw new TypeError("The iterator result is not an object");
            });
          },
        },
        { highWaterMark: 0 },
      );
    }
    get [Symbol.toStringTag]() {
      return "ReadableStream";
    }
    static {
      web.streamRecord = (stream) => stream.#s;
    }
  }
  const streamRecord = (stream) => {
    if (!(stream instanceof ReadableStream)) throw new TypeError("The argument must be a ReadableStream");
    return web.streamRecord(stream);
  };

  // Two branches that see every chunk of the source, each at its own pace.
  function tee(stream) {
    const s = streamRecord(stream);
    const reader = new ReadableStreamDefaultReader(stream);
    let reading = false;
    let readAgain = false;
    const canceled = [false, false];
    const reasons = [undefined, undefined];
    const branches = [];
    const cancelled = deferred();
    const pull = () => {
      if (reading) {
        readAgain = true;
        return Promise.resolve();
      }
      reading = true;
      readInto(s, {
        chunk: (chunk) =>
          queueMicrotask(() => {
            readAgain = false;
            for (const i of [0, 1]) if (!canceled[i]) enqueue(web.streamRecord(branches[i]), chunk);
            reading = false;
            if (readAgain) pull();
          }),
        close: () => {
          reading = false;
          for (const i of [0, 1]) if (!canceled[i]) closeRequest(web.streamRecord(branches[i]));
          if (!canceled[0] || !canceled[1]) cancelled.resolve();
        },
        error: () => {
          reading = false;
        },
      });
      return Promise.resolve();
    };
    const cancelBranch = (i) => (reason) => {
      canceled[i] = true;
      reasons[i] = reason;
      if (canceled[1 - i]) cancelled.resolve(cancelStream(s, reasons.slice()));
      return cancelled.promise;
    };
    for (const i of [0, 1]) branches.push(new ReadableStream({ pull, cancel: cancelBranch(i) }));
    reader.closed.catch((e) => {
      for (const b of branches) errorStream(web.streamRecord(b), e);
      if (!canceled[0] || !canceled[1]) cancelled.resolve();
    });
    return branches;
  }

  class CountQueuingStrategy {
    #hwm;
    constructor(init) {
      this.#hwm = Number(init && init.highWaterMark);
    }
    get highWaterMark() {
      return this.#hwm;
    }
    get size() {
      return () => 1;
    }
  }

  class ByteLengthQueuingStrategy {
    #hwm;
    constructor(init) {
      this.#hwm = Number(init && init.highWaterMark);
    }
    get highWaterMark() {
      return this.#hwm;
    }
    get size() {
      return (chunk) => chunk.byteLength;
    }
  }

  // A stream of a body's bytes, for Response.body: one chunk, then closed.
  web.bytesStream = (bytes) =>
    new ReadableStream({
      start(controller) {
        if (bytes.length > 0) controller.enqueue(bytes.slice());
        controller.close();
      },
    });
  web.isReadableStream = (x) => x instanceof ReadableStream;
  web.ReadableStream = ReadableStream; // fetch's bodies: the class, whatever an agent does to the global

  // Blob.prototype.stream (File API): the blob's bytes as one chunk (a
  // default stream: byte streams and BYOB readers are not here).
  const { stream } = {
    stream() {
      if (!(this instanceof web.Blob)) throw new TypeError("Illegal invocation");
      return web.bytesStream(web.blobBytes(this));
    },
  };
  Object.defineProperty(web.Blob.prototype, "stream", { value: stream, writable: true, enumerable: true, configurable: true });
  web.streamDisturbed = (stream) => web.streamRecord(stream).disturbed;

  install("ReadableStream", ReadableStream);
  install("ReadableStreamDefaultReader", ReadableStreamDefaultReader);
  install("ReadableStreamDefaultController", ReadableStreamDefaultController);
  install("CountQueuingStrategy", CountQueuingStrategy);
  install("ByteLengthQueuingStrategy", ByteLengthQueuingStrategy);
});
