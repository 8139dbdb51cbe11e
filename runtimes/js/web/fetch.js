// Request, Response and fetch (Fetch standard; Headers is headers.js). A Response's body is
// also a ReadableStream (streams.js).
// fetch is the host op net.fetch_stream, checked by the policy like every call: its
// events are the answer's head, then each piece of the body as the host reads it (text,
// or base64 where a piece is not UTF-8: the bytes the server sent). An aborted fetch
// rejects at once with the signal's reason, or errors the body being read; the host
// request may still finish, and its answer is dropped.
(function (web) {
  const { install, submit, native } = web;

  const { Headers, HTTP_TOKEN: TOKEN } = web;
  const REDIRECT_STATUSES = [301, 302, 303, 307, 308];

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
    // A multipart/form-data or an application/x-www-form-urlencoded body.
    // The body is read first, as the standard does: a stream's error comes before a type's.
    formData() {
      const type = this.headers.get("content-type") || "";
      const essence = type.split(";")[0].trim().toLowerCase();
      return this.#consume().then((b) => {
        if (essence === "multipart/form-data") return web.parseMultipart(b, type);
        if (essence !== "application/x-www-form-urlencoded") {
          throw new TypeError("formData(): the body's Content-Type is not a form");
        }
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
      web.hasBody = (target) => target.#bytes !== null || target.#stream !== null;
      web.disturb = (target) => {
        target.#used = true;
      };
      // new Request(request): the new one takes the input's body (bytes are
      // shared, never written; an agent's stream moves over).
      web.takeBody = (from, to) => {
        if (from.bodyUsed || (from.#stream !== null && from.#stream.locked)) throw unusable();
        to.#bytes = from.#bytes;
        if (from.#bytes === null) to.#stream = from.#stream;
      };
      // The bytes of a Request's body, to send (null for none), or for an
      // agent's stream a promise of them: it is read whole first.
      web.requestBytes = (target) => {
        if (target.bodyUsed || (target.#stream !== null && target.#stream.locked)) throw unusable();
        if (target.#bytes === null && target.#stream !== null) return readAll(target.#stream);
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

  // RequestInit's enumerations (Fetch standard); a value outside them is a TypeError.
  const ENUMS = {
    referrerPolicy: ["", "no-referrer", "no-referrer-when-downgrade", "same-origin", "origin", "strict-origin",
      "origin-when-cross-origin", "strict-origin-when-cross-origin", "unsafe-url"],
    mode: ["same-origin", "no-cors", "cors", "navigate"],
    credentials: ["omit", "same-origin", "include"],
    cache: ["default", "no-store", "reload", "no-cache", "force-cache", "only-if-cached"],
    redirect: ["follow", "error", "manual"],
    duplex: ["half"],
    priority: ["high", "low", "auto"],
  };
  const DEFAULTS = { referrerPolicy: "", mode: "cors", credentials: "same-origin", cache: "default", redirect: "follow" };
  function enumOption(init, key, from) {
    if (init[key] === undefined) return from ? from[key] : DEFAULTS[key];
    const v = String(init[key]);
    if (!ENUMS[key].includes(v)) throw new TypeError(`Request: '${v}' is not a valid value for ${key}`);
    return v;
  }
  // The request's referrer as the standard keeps it: "about:client" (the
  // default), "" for no referrer, or a parsed URL (there is no document base).
  function referrerOf(value) {
    const s = String(value);
    if (s === "") return "";
    let parsed;
    try {
      parsed = new web.URL(s);
    } catch (_) {
      throw new TypeError(`Request: the referrer '${s}' is not a valid URL`);
    }
    return parsed.href === "about:client" ? "about:client" : parsed.href;
  }

  class Request extends Body {
    #url;
    #method;
    #headers;
    #signal;
    #options; // mode, credentials, cache, redirect, referrer, referrerPolicy, integrity, keepalive
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
      if (init.window !== undefined && init.window !== null) throw new TypeError("Request: RequestInit's window must be null");
      const o = {};
      for (const key of ["referrerPolicy", "mode", "credentials", "cache", "redirect"]) o[key] = enumOption(init, key, from);
      if (o.mode === "navigate") throw new TypeError("Request: the mode cannot be 'navigate'");
      if (o.cache === "only-if-cached" && o.mode !== "same-origin") {
        throw new TypeError("Request: the cache mode 'only-if-cached' needs the mode 'same-origin'");
      }
      o.referrer = init.referrer !== undefined ? referrerOf(init.referrer) : from ? from.referrer : "about:client";
      o.integrity = init.integrity !== undefined ? String(init.integrity) : from ? from.integrity : "";
      o.keepalive = init.keepalive !== undefined ? Boolean(init.keepalive) : from ? from.keepalive : false;
      if (init.duplex !== undefined) enumOption(init, "duplex", null);
      if (init.priority !== undefined) enumOption(init, "priority", null);
      this.#options = o;
      this.#method = init.method !== undefined ? normalizeMethod(init.method) : from ? from.method : "GET";
      if (o.mode === "no-cors" && !["GET", "HEAD", "POST"].includes(this.#method)) {
        throw new TypeError(`Request: '${this.#method}' is not a method a no-cors request may use`);
      }
      this.#headers = new Headers(init.headers !== undefined ? init.headers : from ? from.headers : undefined);
      this.#signal = init.signal !== undefined ? init.signal : from ? from.signal : null;
      if (this.#signal === null) this.#signal = new web.AbortController().signal;
      const initBody = init.body !== undefined && init.body !== null;
      if ((initBody || (from && web.hasBody(from))) && (this.#method === "GET" || this.#method === "HEAD")) {
        throw new TypeError("Request with GET/HEAD method cannot have body.");
      }
      if (initBody && web.isReadableStream(init.body)) {
        if (init.duplex === undefined) throw new TypeError("Request: a ReadableStream body needs duplex: 'half'");
        if (o.keepalive) throw new TypeError("Request: a keepalive request cannot have a ReadableStream body");
        if (init.body.locked || web.streamDisturbed(init.body)) {
          throw new TypeError("Request: the body stream is disturbed or locked");
        }
        web.setBody(this, null);
        web.setBodyStream(this, init.body);
      } else if (initBody) {
        const body = extractBody(init.body);
        if (body.type && !this.#headers.has("content-type")) this.#headers.set("content-type", body.type);
        web.setBody(this, body.bytes);
      } else if (from) web.takeBody(from, this);
      else web.setBody(this, null);
      // The input request's body now belongs to this one (or was replaced): it is used.
      if (from && web.hasBody(from)) web.disturb(from);
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
      return this.#options.redirect;
    }
    get mode() {
      return this.#options.mode;
    }
    get credentials() {
      return this.#options.credentials;
    }
    get cache() {
      return this.#options.cache;
    }
    get referrer() {
      return this.#options.referrer;
    }
    get referrerPolicy() {
      return this.#options.referrerPolicy;
    }
    get integrity() {
      return this.#options.integrity;
    }
    get keepalive() {
      return this.#options.keepalive;
    }
    get destination() {
      return "";
    }
    get isReloadNavigation() {
      return false;
    }
    get isHistoryNavigation() {
      return false;
    }
    get duplex() {
      return "half";
    }
    clone() {
      const copy = new Request(this.#url, { method: this.#method, headers: this.#headers, signal: this.#signal });
      copy.#options = { ...this.#options };
      web.cloneBody(this, copy);
      return copy;
    }
    get [Symbol.toStringTag]() {
      return "Request";
    }
  }

  // ---- Response ---------------------------------------------------------------------

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
      // A reason-phrase: tabs, spaces, visible ASCII and obs-text (0x80-0xFF) only.
      if (/[^\t\x20-\x7e\x80-\xff]/.test(this.#statusText)) {
        throw new TypeError("Response constructor: the statusText is not a valid reason phrase");
      }
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
      web.freezeHeaders(r.#headers);
      return r;
    }
    static redirect(url, status = 302) {
      if (!REDIRECT_STATUSES.includes(status)) throw new RangeError(`Invalid status code ${status}`);
      const r = new Response(null, { status });
      r.#headers.set("location", new web.URL(String(url)).href);
      web.freezeHeaders(r.#headers);
      return r;
    }
    get [Symbol.toStringTag]() {
      return "Response";
    }
    static {
      // A Response for the host's answer. Its headers also keep each header as
      // an own property, as fetch's plain-object headers had them before.
      web.responseFromHost = (r, requestUrl, method, body) => {
        const res = new Response(null, { status: 200 });
        res.#status = r.status;
        res.#statusText = r.status_text; // the server's reason phrase
        res.#type = "basic";
        res.#url = r.url;
        res.#redirected = r.url !== requestUrl;
        const headers = new Headers();
        for (const name of Object.keys(r.headers || {})) {
          headers.append(name, r.headers[name]);
          // A name the Headers API itself uses ("get", "entries", ...) is not shadowed.
          if (!(name in headers)) Object.defineProperty(headers, name, { value: r.headers[name], enumerable: true });
        }
        res.#headers = web.freezeHeaders(headers);
        // A HEAD answer and the null-body statuses have no body at all (body is null).
        const nullBody = method === "HEAD" || [101, 103, 204, 205, 304].includes(r.status);
        if (!nullBody) web.setBodyStream(res, body);
        return res;
      };
    }
  }

  // Bodies cross to and from the host as text where their UTF-8 is exact, else
  // as base64 (hugind/host/http_body.py): the bytes on the wire, either way.
  const exactUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  function bodyForHost(bytes) {
    if (bytes === null) return { body: null };
    try {
      return { body: exactUtf8.decode(bytes) };
    } catch {
      return { body_base64: bytes.toBase64() };
    }
  }
  function chunkBytes(event) {
    return typeof event.chunk_base64 === "string" ? Uint8Array.fromBase64(event.chunk_base64) : native.encode(event.chunk);
  }

  // A request that got no answer (refused, reset, timed out) is a network error, which
  // fetch reports as node does: TypeError("fetch failed") with the host's error as its cause.
  // The policy's own refusals (PermissionDenied, LimitExceeded, ...) stay as they are.
  const NETWORK_FAILURES = ["IOError", "Timeout"];
  function fetchFailure(e) {
    return e instanceof Error && NETWORK_FAILURES.includes(e.name) ? new TypeError("fetch failed", { cause: e }) : e;
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
      const bytes = web.requestBytes(request);
      if (bytes instanceof Promise) bytes.then((b) => send(request, b, resolve, reject), reject);
      else send(request, bytes, resolve, reject);
    });
  }
  function send(request, bytes, resolve, reject) {
    const signal = request.signal;
    if (signal.aborted) return reject(signal.reason);
    const args = {
      url: request.url,
      method: request.method,
      headers: headersForHost(request.headers),
      ...bodyForHost(bytes),
    };
    // "manual" and "error" both have the host hand back a redirect unfollowed; "error" then
    // fails as node's fetch does.
    if (request.redirect !== "follow") args.redirect = "manual";
    // The answer streams in (net.fetch_stream): fetch resolves with the head, as node's
    // does, and the body gets each piece as the host reads it; the op's reply closes it.
    let settled = false; // the fetch promise, resolved with the head or rejected
    let controller = null; // the body's, from the head until the reply or an error
    const fail = (reason) => {
      if (!settled) {
        settled = true;
        reject(reason);
      } else if (controller !== null) {
        controller.error(reason);
        controller = null;
      }
    };
    const onAbort = () => fail(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    const onEvent = (event) => {
      if (event.head === undefined) {
        if (controller !== null) controller.enqueue(chunkBytes(event));
        return;
      }
      if (settled) return; // aborted before the head came
      settled = true;
      // Any redirect status, Location or not (Fetch, "HTTP fetch"; node does the same).
      if (request.redirect === "error" && REDIRECT_STATUSES.includes(event.head.status)) {
        reject(new TypeError("fetch failed", { cause: new Error("unexpected redirect") }));
        return;
      }
      const body = new web.ReadableStream({
        start(c) {
          controller = c;
        },
      });
      resolve(web.responseFromHost(event.head, request.url, request.method, body));
    };
    submit("net.fetch_stream", args, onEvent).then(
      () => {
        signal.removeEventListener("abort", onAbort);
        if (controller !== null) controller.close();
        controller = null;
      },
      (e) => {
        signal.removeEventListener("abort", onAbort);
        fail(fetchFailure(e));
      },
    );
  }

  install("Request", Request);
  install("Response", Response);
  install("fetch", fetch);
});
