// Headers (Fetch standard): a header list with WebIDL's conversions of its
// init, a live pair iterator, and a guard ("immutable" for the headers of an
// error, redirect or fetched Response). Request and Response are fetch.js.
(function (web) {
  const { install } = web;

  const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
  // Leading and trailing HTTP whitespace is not part of a header value.
  const normalizeValue = (v) => String(v).replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");

  function checkName(name, where) {
    name = String(name);
    if (!TOKEN.test(name)) throw new TypeError(`Headers.${where}: "${name}" is an invalid header name.`);
    return name.toLowerCase();
  }

  function checkValue(value, where) {
    const v = normalizeValue(value);
    if (/[\0\r\n]/.test(v) || /[^\x00-\xff]/.test(v)) {
      throw new TypeError(`Headers.${where}: "${v}" is an invalid header value.`);
    }
    return v;
  }

  // HeadersInit as WebIDL converts it, whole, before the Fetch standard fills
  // the headers: an object with an iterator is a sequence of name/value
  // sequences (each exactly two long), any other object a record of its own
  // enumerable string keys; names and values are ByteStrings (no code unit
  // above U+00FF), a key checked before its value is read.
  const byteString = (v, what) => {
    const s = String(v);
    if (/[^\x00-\xff]/.test(s)) throw new TypeError(`Headers: ${what} is not a ByteString`);
    return s;
  };
  function headersInit(init) {
    if (init === null || (typeof init !== "object" && typeof init !== "function")) {
      throw new TypeError("Headers constructor: init must be a sequence or a record");
    }
    const pairs = [];
    const iterator = init[Symbol.iterator];
    if (iterator !== undefined && iterator !== null) {
      if (typeof iterator !== "function") throw new TypeError("Headers constructor: init[Symbol.iterator] is not a function");
      for (const pair of { [Symbol.iterator]: () => iterator.call(init) }) {
        if (pair === null || (typeof pair !== "object" && typeof pair !== "function")) {
          throw new TypeError("Headers constructor: each header must be a sequence");
        }
        const arr = Array.from(pair, (v) => byteString(v, "a header name or value"));
        if (arr.length !== 2) throw new TypeError("Headers constructor: expected name/value pair to be length 2");
        pairs.push(arr);
      }
      return pairs;
    }
    for (const key of Reflect.ownKeys(init)) {
      const d = Reflect.getOwnPropertyDescriptor(init, key);
      if (d === undefined || !d.enumerable) continue;
      if (typeof key === "symbol") throw new TypeError("Headers constructor: a header name cannot be a Symbol");
      const name = byteString(key, "a header name");
      pairs.push([name, byteString(init[key], "a header value")]);
    }
    return pairs;
  }

  // The Headers iterator (WebIDL's default iterator for a pair iterable): it
  // reads the current list at each step, so changes made while iterating show.
  const IteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
  class HeadersIterator {
    #list;
    #kind;
    #index = 0;
    constructor(list, kind) {
      this.#list = list;
      this.#kind = kind;
    }
    next() {
      if (!(#list in this)) throw new TypeError("next called on an object that is not a Headers iterator");
      const list = this.#list();
      if (this.#index >= list.length) return { value: undefined, done: true };
      const [k, v] = list[this.#index++];
      return { value: this.#kind === "key" ? k : this.#kind === "value" ? v : [k, v], done: false };
    }
  }
  Object.setPrototypeOf(HeadersIterator.prototype, IteratorPrototype);
  Object.defineProperty(HeadersIterator.prototype, "next", { enumerable: true });
  Object.defineProperty(HeadersIterator.prototype, Symbol.toStringTag, { value: "Headers Iterator", configurable: true });

  class Headers {
    #map = new Map(); // lowercase name -> [values]
    #immutable = false;
    constructor(init = undefined) {
      if (init === undefined) return;
      for (const [name, value] of headersInit(init)) this.append(name, value);
    }
    #mutable(where) {
      if (this.#immutable) throw new TypeError(`Headers.${where}: these headers are immutable`);
    }
    append(name, value) {
      const k = checkName(name, "append");
      const v = checkValue(value, "append");
      this.#mutable("append");
      const list = this.#map.get(k);
      if (list) list.push(v);
      else this.#map.set(k, [v]);
    }
    set(name, value) {
      const k = checkName(name, "set");
      const v = checkValue(value, "set");
      this.#mutable("set");
      this.#map.set(k, [v]);
    }
    delete(name) {
      const k = checkName(name, "delete");
      this.#mutable("delete");
      this.#map.delete(k);
    }
    get(name) {
      const list = this.#map.get(checkName(name, "get"));
      return list ? list.join(", ") : null;
    }
    getSetCookie() {
      return (this.#map.get("set-cookie") || []).slice();
    }
    has(name) {
      return this.#map.has(checkName(name, "has"));
    }
    // The "sort and combine" list, which the iterators read afresh at each step.
    #sorted() {
      const out = [];
      for (const name of [...this.#map.keys()].sort()) {
        if (name === "set-cookie") for (const v of this.#map.get(name)) out.push([name, v]);
        else out.push([name, this.#map.get(name).join(", ")]);
      }
      return out;
    }
    entries() {
      return new HeadersIterator(() => this.#sorted(), "key+value");
    }
    keys() {
      return new HeadersIterator(() => this.#sorted(), "key");
    }
    values() {
      return new HeadersIterator(() => this.#sorted(), "value");
    }
    forEach(fn, thisArg = undefined) {
      if (typeof fn !== "function") throw new TypeError("Headers.forEach: the callback is not a function");
      for (const [k, v] of this.entries()) fn.call(thisArg, v, k, this);
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    get [Symbol.toStringTag]() {
      return "Headers";
    }
    static {
      // The "immutable" guard: a Response made by error() or redirect(), or fetched.
      web.freezeHeaders = (headers) => {
        headers.#immutable = true;
        return headers;
      };
    }
  }

  web.Headers = Headers;
  web.HTTP_TOKEN = TOKEN;
  install("Headers", Headers);
});
