// Blob and File: immutable bytes with a MIME type, built from strings (as
// UTF-8), buffers, views and other blobs. text(), arrayBuffer() and bytes()
// read the whole blob; stream() is added by streams.js.
(function (web) {
  const { install, native } = web;

  function partBytes(part) {
    if (part instanceof Blob) return web.blobBytes(part);
    if (part instanceof ArrayBuffer) return new Uint8Array(part.slice(0));
    if (ArrayBuffer.isView(part)) return new Uint8Array(part.buffer.slice(part.byteOffset, part.byteOffset + part.byteLength));
    return native.encode(String(part).toWellFormed());
  }

  // A type that is not printable ASCII is dropped, as the File API says.
  const cleanType = (type) => {
    const t = type === undefined ? "" : String(type);
    return /^[\x20-\x7e]*$/.test(t) ? t.toLowerCase() : "";
  };

  // A WebIDL dictionary argument: undefined and null are empty, another
  // primitive is a TypeError; members are read in lexicographic order.
  const bag = (options, what) => {
    if (options === undefined || options === null) return {};
    if (typeof options !== "object" && typeof options !== "function") {
      throw new TypeError(`The "${what}" argument must be an object`);
    }
    return options;
  };
  // WebIDL [Clamp] long long: NaN is 0, halves round to the even neighbour.
  const clampLong = (v) => {
    const n = Number(v);
    if (Number.isNaN(n)) return 0;
    const c = Math.min(Math.max(n, -Number.MAX_SAFE_INTEGER), Number.MAX_SAFE_INTEGER);
    const f = Math.floor(c);
    const rest = c - f;
    return rest > 0.5 || (rest === 0.5 && f % 2 !== 0) ? f + 1 : f;
  };
  const ENDINGS = ["transparent", "native"];
  function readBag(options, isFile) {
    const o = bag(options, "options");
    const rawEndings = o.endings;
    const endings = rawEndings === undefined ? "transparent" : String(rawEndings);
    if (!ENDINGS.includes(endings)) throw new TypeError(`The "endings" option must be "transparent" or "native"`);
    // FilePropertyBag's lastModified (a long long) sorts between the two.
    const lm = isFile ? o.lastModified : undefined;
    const lastModified = lm === undefined ? Date.now() : Math.trunc(Number(lm)) || 0;
    const rawType = o.type;
    return { endings, lastModified, type: rawType === undefined ? "" : String(rawType) };
  }

  class Blob {
    #bytes;
    #type;
    #lastModified;
    constructor(parts = undefined, options = undefined) {
      // A WebIDL sequence: @@iterator is read once, then each element is
      // converted as it comes (left to right), before the options are read.
      const iterate = parts === undefined ? [][Symbol.iterator] : parts !== null && typeof parts === "object" ? parts[Symbol.iterator] : undefined;
      if (typeof iterate !== "function") throw new TypeError("The \"sources\" argument must be a sequence");
      const sequence = { [Symbol.iterator]: () => iterate.call(parts === undefined ? [] : parts) };
      const strings = Array.from(sequence, (p) => (p instanceof Blob || p instanceof ArrayBuffer || ArrayBuffer.isView(p) ? p : String(p)));
      const bagRead = readBag(options, new.target === File || new.target.prototype instanceof File);
      // "native" endings: every CR LF, CR or LF in a string part becomes the platform's LF.
      const chunks = strings.map((p) => partBytes(typeof p === "string" && bagRead.endings === "native" ? p.replace(/\r\n?/g, "\n") : p));
      const size = chunks.reduce((n, c) => n + c.length, 0);
      this.#bytes = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        this.#bytes.set(c, at);
        at += c.length;
      }
      this.#type = cleanType(bagRead.type);
      this.#lastModified = bagRead.lastModified;
    }
    get size() {
      return this.#bytes.length;
    }
    get type() {
      return this.#type;
    }
    slice(start = 0, end = this.size, type = undefined) {
      const size = this.size;
      const clamp = (n) => (n < 0 ? Math.max(size + n, 0) : Math.min(n, size));
      const from = clamp(clampLong(start));
      const to = clamp(clampLong(end));
      const blob = new Blob([], { type: type === undefined ? "" : type });
      blob.#bytes = this.#bytes.slice(from, Math.max(from, to));
      return blob;
    }
    text() {
      return Promise.resolve(new TextDecoder().decode(this.#bytes));
    }
    arrayBuffer() {
      return Promise.resolve(this.#bytes.slice().buffer);
    }
    bytes() {
      return Promise.resolve(this.#bytes.slice());
    }
    get [Symbol.toStringTag]() {
      return "Blob";
    }
    static {
      web.blobBytes = (blob) => blob.#bytes;
      web.fileLastModified = (file) => file.#lastModified;
    }
  }

  class File extends Blob {
    #name;
    constructor(parts, name, options = undefined) {
      if (arguments.length < 2) throw new TypeError("The \"fileName\" argument must be specified");
      if (parts === undefined) throw new TypeError("The \"fileBits\" argument must be a sequence");
      super(parts, options);
      this.#name = String(name);
    }
    get name() {
      return this.#name;
    }
    get lastModified() {
      return web.fileLastModified(this);
    }
    get [Symbol.toStringTag]() {
      return "File";
    }
  }

  web.Blob = Blob;
  web.File = File;
  install("Blob", Blob);
  install("File", File);
});
