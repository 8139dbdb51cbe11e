// Blob and File: immutable bytes with a MIME type, built from strings (as
// UTF-8), buffers, views and other blobs. No streams: text(), arrayBuffer()
// and bytes() read the whole blob.
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

  class Blob {
    #bytes;
    #type;
    constructor(parts = [], options = {}) {
      if (parts === null || typeof parts !== "object" || typeof parts[Symbol.iterator] !== "function") {
        throw new TypeError("The \"sources\" argument must be a sequence");
      }
      const chunks = Array.from(parts, partBytes);
      const size = chunks.reduce((n, c) => n + c.length, 0);
      this.#bytes = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        this.#bytes.set(c, at);
        at += c.length;
      }
      this.#type = cleanType(options && options.type);
    }
    get size() {
      return this.#bytes.length;
    }
    get type() {
      return this.#type;
    }
    slice(start = 0, end = this.size, type = "") {
      const size = this.size;
      const clamp = (n) => (n < 0 ? Math.max(size + n, 0) : Math.min(n, size));
      const from = clamp(Math.trunc(Number(start)) || 0);
      const to = clamp(Math.trunc(Number(end)) || 0);
      const blob = new Blob([], { type });
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
    }
  }

  class File extends Blob {
    #name;
    #lastModified;
    constructor(parts, name, options = {}) {
      if (arguments.length < 2) throw new TypeError("The \"fileName\" argument must be specified");
      super(parts, options);
      this.#name = String(name);
      const lm = options && options.lastModified;
      this.#lastModified = lm === undefined ? Date.now() : Math.trunc(Number(lm)) || 0;
    }
    get name() {
      return this.#name;
    }
    get lastModified() {
      return this.#lastModified;
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
