// URLSearchParams and the application/x-www-form-urlencoded format, after
// the WHATWG URL standard. A URL's searchParams mirror its query: url.js asks
// for them with web.paramsFor and web.paramsReset (defined here), and they
// write the query back with web.urlSetQuery (defined in url.js).
(function (web) {
  const { install } = web;
  const { percentEncode, percentDecodeBytes, utf8Lossy, toUSV, FORM } = web.urlEncoding;

  // ---- application/x-www-form-urlencoded ----------------------------------------------

  function parseForm(input) {
    const out = [];
    for (const seq of input.split("&")) {
      if (seq === "") continue;
      const eq = seq.indexOf("=");
      const name = eq < 0 ? seq : seq.slice(0, eq);
      const value = eq < 0 ? "" : seq.slice(eq + 1);
      const dec = (s) => utf8Lossy(percentDecodeBytes(s.replace(/\+/g, " ")));
      out.push([dec(name), dec(value)]);
    }
    return out;
  }

  const serializeForm = (list) =>
    list.map(([k, v]) => percentEncode(k, FORM, true) + "=" + percentEncode(v, FORM, true)).join("&");

  // ---- URLSearchParams ------------------------------------------------------------------

  class URLSearchParams {
    #list = [];
    #url = null; // the URL whose query this object mirrors
    // The init as WebIDL converts (sequence<sequence<USVString>> or
    // record<USVString, USVString> or USVString): any object, a function too,
    // with an @@iterator is a sequence (a URLSearchParams is one, through its
    // own iterator), any other object a record.
    constructor(init = "") {
      if ((typeof init === "object" && init !== null) || typeof init === "function") {
        const iterator = init[Symbol.iterator];
        if (iterator !== undefined && iterator !== null) {
          if (typeof iterator !== "function") throw new TypeError("URLSearchParams: init[Symbol.iterator] is not a function");
          for (const pair of { [Symbol.iterator]: () => iterator.call(init) }) {
            if (pair === null || (typeof pair !== "object" && typeof pair !== "function")) {
              throw new TypeError("Each query pair must be an iterable [name, value] tuple");
            }
            const arr = Array.from(pair);
            if (arr.length !== 2) throw new TypeError("Each query pair must be an iterable [name, value] tuple");
            this.#list.push([toUSV(arr[0]), toUSV(arr[1])]);
          }
          return;
        }
        for (const key of Reflect.ownKeys(init)) {
          const desc = Reflect.getOwnPropertyDescriptor(init, key);
          if (desc === undefined || !desc.enumerable) continue;
          if (typeof key === "symbol") throw new TypeError("URLSearchParams: a record key cannot be a Symbol");
          this.#list.push([toUSV(key), toUSV(init[key])]);
        }
      } else {
        let s = toUSV(init);
        if (s.startsWith("?")) s = s.slice(1);
        this.#list = parseForm(s);
      }
    }
    #update() {
      if (!this.#url) return;
      const s = serializeForm(this.#list);
      web.urlSetQuery(this.#url, s === "" ? null : s);
    }
    get size() {
      return this.#list.length;
    }
    append(name, value) {
      this.#list.push([toUSV(name), toUSV(value)]);
      this.#update();
    }
    delete(name, value = undefined) {
      name = toUSV(name);
      if (value === undefined) this.#list = this.#list.filter(([k]) => k !== name);
      else {
        value = toUSV(value);
        this.#list = this.#list.filter(([k, v]) => k !== name || v !== value);
      }
      this.#update();
    }
    get(name) {
      name = toUSV(name);
      const hit = this.#list.find(([k]) => k === name);
      return hit ? hit[1] : null;
    }
    getAll(name) {
      name = toUSV(name);
      return this.#list.filter(([k]) => k === name).map(([, v]) => v);
    }
    has(name, value = undefined) {
      name = toUSV(name);
      if (value === undefined) return this.#list.some(([k]) => k === name);
      value = toUSV(value);
      return this.#list.some(([k, v]) => k === name && v === value);
    }
    set(name, value) {
      name = toUSV(name);
      value = toUSV(value);
      const at = this.#list.findIndex(([k]) => k === name);
      if (at < 0) this.#list.push([name, value]);
      else {
        this.#list[at][1] = value;
        this.#list = this.#list.filter(([k], i) => k !== name || i === at);
      }
      this.#update();
    }
    sort() {
      // Stable, by UTF-16 code units, as the standard says.
      this.#list = this.#list
        .map((pair, i) => [pair, i])
        .sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]))
        .map(([pair]) => pair);
      this.#update();
    }
    forEach(fn, thisArg = undefined) {
      for (let i = 0; i < this.#list.length; i++) fn.call(thisArg, this.#list[i][1], this.#list[i][0], this);
    }
    *entries() {
      for (let i = 0; i < this.#list.length; i++) yield [this.#list[i][0], this.#list[i][1]];
    }
    *keys() {
      for (const [k] of this.entries()) yield k;
    }
    *values() {
      for (const [, v] of this.entries()) yield v;
    }
    [Symbol.iterator]() {
      return this.entries();
    }
    toString() {
      return serializeForm(this.#list);
    }
    get [Symbol.toStringTag]() {
      return "URLSearchParams";
    }
    static {
      // A URL's query is taken as it is: a leading "?" of it is data, not a prefix.
      web.paramsFor = (url, query) => {
        const params = new URLSearchParams();
        params.#list = parseForm(query || "");
        params.#url = url;
        return params;
      };
      web.paramsReset = (params, query) => {
        params.#list = parseForm(query || "");
      };
    }
  }

  web.URLSearchParams = URLSearchParams;
  web.parseForm = parseForm;
  install("URLSearchParams", URLSearchParams);
});
