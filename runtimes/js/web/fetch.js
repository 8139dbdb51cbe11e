// Headers, Request, Response and fetch (Fetch standard). A Response's body is
// also a ReadableStream (streams.js) of the whole body as one chunk.
// fetch is the host op net.fetch, checked by the policy like every call; the
// op answers {status, headers, body, url} with a text body, so a Response's
// bytes are that text in UTF-8. An aborted fetch rejects at once with the
// signal's reason; the host request may still finish, and its answer is dropped.
(function (web) {
  const { install, submit, native } = web;

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
    constructor(init = undefined) {
      if (init === undefined) return;
      for (const [name, value] of headersInit(init)) this.append(name, value);
    }
    append(name, value) {
      const k = checkName(name, "append");
      const v = checkValue(value, "append");
      const list = this.#map.get(k);
      if (list) list.push(v);
      else this.#map.set(k, [v]);
    }
    set(name, value) {
      this.#map.set(checkName(name, "set"), [checkValue(value, "set")]);
    }
    delete(name) {
      this.#map.delete(checkName(name, "delete"));
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
  }

  // The host op takes one string per name.
  function headersForHost(headers) {
    const out = {};
    for (const [k, v] of headers) out[k] = k in out ? `${out[k]}, ${v}` : v;
    return out;
  }

  // ---- bodies ----------------------------------------------------------------

  // -> {bytes: Uint8Array | null, type: string | null}
  function extractBody(body) {
    if (body === undefined || body === null) return { bytes: null, type: null };
    if (typeof body === "string") return { bytes: native.encode(body.toWellFormed()), type: "text/plain;charset=UTF-8" };
    if (body instanceof web.URLSearchParams) {
      return { bytes: native.encode(body.toString()), type: "application/x-www-form-urlencoded;charset=UTF-8" };
    }
    if (body instanceof web.Blob) return { bytes: web.blobBytes(body).slice(), type: body.type || null };
    if (body instanceof web.FormData) return multipart(body);
    if (body instanceof ArrayBuffer) return { bytes: new Uint8Array(body.slice(0)), type: null };
    if (ArrayBuffer.isView(body)) {
      return { bytes: new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength)), type: null };
    }
    return { bytes: native.encode(String(body).toWellFormed()), type: "text/plain;charset=UTF-8" };
  }

  // multipart/form-data as the HTML standard encodes it: names and filenames
  // escape '"', CR and LF; string values get CRLF line breaks.
  function multipart(form) {
    const random = new Uint8Array(12);
    native.randomFill(random);
    const boundary = "----hugind-formdata-" + Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
    const escape = (s) => s.replace(/\n/g, "%0A").replace(/\r/g, "%0D").replace(/"/g, "%22");
    const chunks = [];
    for (const [name, value] of form) {
      let head = `--${boundary}\r\nContent-Disposition: form-data; name="${escape(name)}"`;
      if (typeof value === "string") {
        chunks.push(native.encode(`${head}\r\n\r\n${value.replace(/\r\n|\r|\n/g, "\r\n")}\r\n`));
        continue;
      }
      head += `; filename="${escape(value.name)}"\r\nContent-Type: ${value.type || "application/octet-stream"}\r\n\r\n`;
      chunks.push(native.encode(head), web.blobBytes(value), native.encode("\r\n"));
    }
    chunks.push(native.encode(`--${boundary}--\r\n`));
    const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    return { bytes, type: `multipart/form-data; boundary=${boundary}` };
  }

  // The body mixin. A body is bytes (from the host or the constructor) or an
  // agent's ReadableStream; `body` shows either as a stream, made on first
  // use. As the Fetch standard says, reading through that stream marks the
  // body used, and text() and the rest refuse a used or locked body.
  const unusable = () => new TypeError("Body is unusable: Body has already been read");
  class Body {
    #bytes = null;
    #stream = null;
    #used = false;
    get bodyUsed() {
      return this.#used || (this.#stream !== null && web.streamDisturbed(this.#stream));
    }
    get body() {
      if (this.#stream === null && this.#bytes !== null) {
        this.#stream = web.bytesStream(this.#used ? new Uint8Array(0) : this.#bytes);
        // A body already read whole shows as a read, locked stream.
        if (this.#used) this.#stream.getReader().read();
      }
      return this.#stream;
    }
    #consume() {
      if (this.bodyUsed || (this.#stream !== null && this.#stream.locked)) return Promise.reject(unusable());
      if (this.#stream !== null) return readAll(this.#stream);
      this.#used = this.#bytes !== null;
      return Promise.resolve(this.#bytes ? this.#bytes.slice() : new Uint8Array(0));
    }
    text() {
      return this.#consume().then((b) => new TextDecoder().decode(b));
    }
    json() {
      return this.text().then((t) => JSON.parse(t));
    }
    arrayBuffer() {
      return this.#consume().then((b) => b.buffer);
    }
    bytes() {
      return this.#consume();
    }
    blob() {
      const type = this.headers.get("content-type") || "";
      return this.#consume().then((b) => new web.Blob([b], { type }));
    }
    // An application/x-www-form-urlencoded body is parsed; a multipart one is not.
    formData() {
      const type = this.headers.get("content-type") || "";
      const essence = type.split(";")[0].trim().toLowerCase();
      if (essence === "multipart/form-data") {
        return Promise.reject(new TypeError("formData() of a multipart/form-data body is not supported in hugind"));
      }
      if (essence !== "application/x-www-form-urlencoded") {
        return Promise.reject(new TypeError("formData(): the body's Content-Type is not a form"));
      }
      return this.#consume().then((b) => {
        const form = new web.FormData();
        for (const [k, v] of web.parseForm(new TextDecoder("utf-8", { ignoreBOM: true }).decode(b))) form.append(k, v);
        return form;
      });
    }
    static {
      web.setBody = (target, bytes) => {
        target.#bytes = bytes;
      };
      web.setBodyStream = (target, stream) => {
        target.#stream = stream;
      };
      // The bytes of a body that is not an agent's stream (a Request's, to send).
      web.bodyOf = (target) => {
        if (target.bodyUsed || (target.#stream !== null && target.#stream.locked)) throw unusable();
        if (target.#bytes === null && target.#stream !== null) {
          throw new TypeError("A ReadableStream request body is not supported in hugind");
        }
        return target.#bytes;
      };
      // clone(): bytes are shared (they are never written); an agent's stream is teed.
      web.cloneBody = (from, to) => {
        if (from.bodyUsed || (from.#stream !== null && from.#stream.locked)) throw unusable();
        to.#bytes = from.#bytes;
        if (from.#bytes === null && from.#stream !== null) [from.#stream, to.#stream] = from.#stream.tee();
      };
    }
  }

  // Every chunk of a stream, joined; each must be a Uint8Array, as fetch says.
  function readAll(stream) {
    const reader = stream.getReader();
    const chunks = [];
    const next = () =>
      reader.read().then(({ value, done }) => {
        if (done) {
          const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
          let at = 0;
          for (const c of chunks) {
            bytes.set(c, at);
            at += c.length;
          }
          return bytes;
        }
        if (!(value instanceof Uint8Array)) throw new TypeError("Received non-Uint8Array chunk");
        chunks.push(value);
        return next();
      });
    return next();
  }

  // ---- Request -------------------------------------------------------------------

  const METHODS = ["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH"];
  function normalizeMethod(method) {
    const m = String(method);
    if (!TOKEN.test(m)) throw new TypeError(`'${m}' is not a valid HTTP method.`);
    const upper = m.toUpperCase();
    if (["CONNECT", "TRACE", "TRACK"].includes(upper)) throw new TypeError(`'${m}' HTTP method is unsupported.`);
    return METHODS.includes(upper) ? upper : m;
  }

  class Request extends Body {
    #url;
    #method;
    #headers;
    #signal;
    #redirect;
    constructor(input, init = {}) {
      super();
      init = init || {};
      const from = input instanceof Request ? input : null;
      if (from) this.#url = from.url;
      else {
        let parsed;
        try {
          parsed = new web.URL(String(input));
        } catch (_) {
          throw new TypeError(`Failed to parse URL from ${String(input)}`);
        }
        if (parsed.username || parsed.password) {
          throw new TypeError(`Request cannot be constructed from a URL that includes credentials: ${parsed.href}`);
        }
        this.#url = parsed.href;
      }
      this.#method = init.method !== undefined ? normalizeMethod(init.method) : from ? from.method : "GET";
      this.#headers = new Headers(init.headers !== undefined ? init.headers : from ? from.headers : undefined);
      this.#redirect = init.redirect !== undefined ? String(init.redirect) : from ? from.redirect : "follow";
      this.#signal = init.signal !== undefined ? init.signal : from ? from.signal : null;
      if (this.#signal === null) this.#signal = new web.AbortController().signal;
      let bytes = null;
      if (init.body !== undefined && init.body !== null) {
        if (this.#method === "GET" || this.#method === "HEAD") {
          throw new TypeError("Request with GET/HEAD method cannot have body.");
        }
        if (web.isReadableStream(init.body)) throw new TypeError("A ReadableStream request body is not supported in hugind");
        const body = extractBody(init.body);
        bytes = body.bytes;
        if (body.type && !this.#headers.has("content-type")) this.#headers.set("content-type", body.type);
      } else if (from) bytes = web.bodyOf(from);
      web.setBody(this, bytes);
    }
    get url() {
      return this.#url;
    }
    get method() {
      return this.#method;
    }
    get headers() {
      return this.#headers;
    }
    get signal() {
      return this.#signal;
    }
    get redirect() {
      return this.#redirect;
    }
    clone() {
      return new Request(this);
    }
    get [Symbol.toStringTag]() {
      return "Request";
    }
  }

  // ---- Response ---------------------------------------------------------------------

  // The host reports no reason phrase; these are the standard ones.
  const REASONS = {
    200: "OK", 201: "Created", 202: "Accepted", 204: "No Content", 206: "Partial Content",
    301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
    307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
    403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed", 408: "Request Timeout",
    409: "Conflict", 410: "Gone", 413: "Content Too Large", 415: "Unsupported Media Type",
    418: "I'm a Teapot", 422: "Unprocessable Content", 429: "Too Many Requests",
    500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway",
    503: "Service Unavailable", 504: "Gateway Timeout",
  };

  class Response extends Body {
    #status = 200;
    #statusText = "";
    #headers;
    #url = "";
    #type = "default";
    #redirected = false;
    constructor(body = null, init = {}) {
      super();
      init = init || {};
      if (init.status !== undefined) {
        const s = Number(init.status);
        if (!Number.isInteger(s) || s < 200 || s > 599) {
          throw new RangeError(`init["status"] must be in the range of 200 to 599, inclusive.`);
        }
        this.#status = s;
      }
      this.#statusText = init.statusText !== undefined ? String(init.statusText) : "";
      this.#headers = new Headers(init.headers);
      const stream = web.isReadableStream(body) ? body : null;
      if (stream !== null && (stream.locked || web.streamDisturbed(stream))) {
        throw new TypeError("Response body object should not be disturbed or locked");
      }
      const extracted = stream !== null ? { bytes: null, type: null } : extractBody(body);
      if ((extracted.bytes !== null || stream !== null) && [101, 204, 205, 304].includes(this.#status)) {
        throw new TypeError("Response constructor: Invalid response status code " + this.#status);
      }
      if (extracted.type && !this.#headers.has("content-type")) this.#headers.set("content-type", extracted.type);
      web.setBody(this, extracted.bytes);
      web.setBodyStream(this, stream);
    }
    get status() {
      return this.#status;
    }
    get statusText() {
      return this.#statusText;
    }
    get ok() {
      return this.#status >= 200 && this.#status < 300;
    }
    get headers() {
      return this.#headers;
    }
    get url() {
      return this.#url;
    }
    get type() {
      return this.#type;
    }
    get redirected() {
      return this.#redirected;
    }
    clone() {
      const copy = new Response(null, { status: Math.max(200, this.#status), statusText: this.#statusText });
      copy.#status = this.#status;
      copy.#headers = new Headers(this.#headers);
      copy.#url = this.#url;
      copy.#type = this.#type;
      copy.#redirected = this.#redirected;
      web.cloneBody(this, copy);
      return copy;
    }
    static json(data, init = {}) {
      const text = JSON.stringify(data);
      if (text === undefined) throw new TypeError("Value is not JSON serializable");
      const headers = new Headers(init && init.headers);
      if (!headers.has("content-type")) headers.set("content-type", "application/json");
      return new Response(text, { ...init, headers });
    }
    static error() {
      const r = new Response(null);
      r.#status = 0;
      r.#type = "error";
      return r;
    }
    static redirect(url, status = 302) {
      if (![301, 302, 303, 307, 308].includes(status)) throw new RangeError(`Invalid status code ${status}`);
      const r = new Response(null, { status });
      r.#headers.set("location", new web.URL(String(url)).href);
      return r;
    }
    get [Symbol.toStringTag]() {
      return "Response";
    }
    static {
      // A Response for the host's answer. Its headers also keep each header as
      // an own property, as fetch's plain-object headers had them before.
      web.responseFromHost = (r, requestUrl, method) => {
        const res = new Response(null, { status: 200 });
        res.#status = r.status;
        res.#statusText = REASONS[r.status] || "";
        res.#type = "basic";
        res.#url = r.url;
        res.#redirected = r.url !== requestUrl;
        const headers = new Headers();
        for (const name of Object.keys(r.headers || {})) {
          headers.append(name, r.headers[name]);
          // A name the Headers API itself uses ("get", "entries", ...) is not shadowed.
          if (!(name in headers)) Object.defineProperty(headers, name, { value: r.headers[name], enumerable: true });
        }
        res.#headers = headers;
        // A HEAD answer and the null-body statuses have no body at all (body is null).
        const nullBody = method === "HEAD" || [101, 103, 204, 205, 304].includes(r.status);
        web.setBody(res, nullBody ? null : native.encode(String(r.body)));
        return res;
      };
    }
  }

  // A method, not a constructor, as a built-in operation is.
  const { fetch } = {
    fetch(input, init = {}) {
      return fetchRequest(input, init);
    },
  };
  function fetchRequest(input, init) {
    return new Promise((resolve, reject) => {
      const request = new Request(input, init);
      const signal = request.signal;
      if (signal.aborted) throw signal.reason;
      const bytes = web.bodyOf(request);
      const args = {
        url: request.url,
        method: request.method,
        headers: headersForHost(request.headers),
        body: bytes === null ? null : new TextDecoder().decode(bytes),
      };
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      submit("net.fetch", args).then(
        (r) => {
          signal.removeEventListener("abort", onAbort);
          if (!signal.aborted) resolve(web.responseFromHost(r, request.url, request.method));
        },
        (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      );
    });
  }

  install("Headers", Headers);
  install("Request", Request);
  install("Response", Response);
  install("fetch", fetch);
});
