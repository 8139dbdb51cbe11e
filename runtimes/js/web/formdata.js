// FormData: an ordered list of (name, value) entries, a value being a string
// or a File. fetch sends it as multipart/form-data (see fetch.js). There is
// no <form> to read from, so the constructor takes no argument.
(function (web) {
  const { install } = web;

  function entryValue(value, filename, withName) {
    if (value instanceof web.Blob) {
      // A Blob becomes a File; an explicit filename renames a File too.
      if (withName || !(value instanceof web.File)) {
        const name = withName ? String(filename).toWellFormed() : "blob";
        const options = { type: value.type };
        if (value instanceof web.File) options.lastModified = value.lastModified;
        return new web.File([value], name, options);
      }
      return value;
    }
    if (withName) throw new TypeError("FormData: a filename is accepted only with a Blob value");
    return String(value).toWellFormed();
  }

  class FormData {
    #entries = [];
    constructor(form) {
      if (form !== undefined) throw new TypeError("FormData: there is no HTML form to read (pass no argument)");
    }
    append(name, value, filename = undefined) {
      this.#entries.push([String(name).toWellFormed(), entryValue(value, filename, arguments.length > 2)]);
    }
    set(name, value, filename = undefined) {
      const key = String(name).toWellFormed();
      const entry = [key, entryValue(value, filename, arguments.length > 2)];
      const first = this.#entries.findIndex(([k]) => k === key);
      if (first < 0) {
        this.#entries.push(entry);
        return;
      }
      this.#entries = this.#entries.filter(([k], i) => k !== key || i === first);
      this.#entries[first] = entry;
    }
    get(name) {
      const key = String(name).toWellFormed();
      const found = this.#entries.find(([k]) => k === key);
      return found ? found[1] : null;
    }
    getAll(name) {
      const key = String(name).toWellFormed();
      return this.#entries.filter(([k]) => k === key).map(([, v]) => v);
    }
    has(name) {
      const key = String(name).toWellFormed();
      return this.#entries.some(([k]) => k === key);
    }
    delete(name) {
      const key = String(name).toWellFormed();
      this.#entries = this.#entries.filter(([k]) => k !== key);
    }
    forEach(callback, thisArg = undefined) {
      for (const [k, v] of this) callback.call(thisArg, v, k, this);
    }
    *entries() {
      // Live, as the standard's iterator is: entries appended while iterating are seen.
      for (let i = 0; i < this.#entries.length; i++) yield this.#entries[i].slice();
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
    get [Symbol.toStringTag]() {
      return "FormData";
    }
  }

  // ---- multipart/form-data bodies (RFC 7578, as Body.formData() reads them) ----

  // A parameter of a Content-Type value, unquoted ("boundary", "name", ...).
  function parameter(header, key) {
    const re = new RegExp(`;\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;\\s]*))`, "i");
    const m = re.exec(header);
    if (!m) return null;
    return m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2];
  }
  const latin1 = (bytes) => {
    let out = "";
    for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
    return out;
  };
  const bytesOf = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));
  // The escapes a form serializer writes into names and filenames.
  const unescapeName = (s) => s.replace(/%0A/gi, "\n").replace(/%0D/gi, "\r").replace(/%22/g, '"');

  // The entries of a multipart/form-data body, or a TypeError when it is not one.
  web.parseMultipart = (bytes, contentType) => {
    const boundary = parameter(contentType, "boundary");
    if (!boundary) throw new TypeError("formData(): the multipart/form-data Content-Type has no boundary");
    const text = latin1(bytes);
    const delimiter = `--${boundary}`;
    if (!text.startsWith(delimiter)) throw new TypeError("formData(): the body does not start with its boundary");
    const form = new FormData();
    let at = delimiter.length;
    for (;;) {
      if (text.startsWith("--", at)) return form; // the closing delimiter
      if (!text.startsWith("\r\n", at)) throw new TypeError("formData(): a boundary is not followed by CRLF");
      const headEnd = text.indexOf("\r\n\r\n", at + 2);
      if (headEnd < 0) throw new TypeError("formData(): a part has no end to its headers");
      const headers = new Map();
      for (const line of text.slice(at + 2, headEnd).split("\r\n")) {
        const colon = line.indexOf(":");
        if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
      const next = text.indexOf(`\r\n${delimiter}`, headEnd + 4);
      if (next < 0) throw new TypeError("formData(): a part is not closed by its boundary");
      const content = text.slice(headEnd + 4, next);
      const disposition = headers.get("content-disposition") || "";
      if (!/^form-data\s*(;|$)/i.test(disposition)) throw new TypeError("formData(): a part is not form-data");
      const name = parameter(disposition, "name");
      if (name === null) throw new TypeError("formData(): a part has no name");
      const filename = parameter(disposition, "filename");
      // "UTF-8 decode without BOM": a leading U+FEFF stays.
      const utf8 = (s) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytesOf(s));
      const key = utf8(unescapeName(name));
      if (filename === null) form.append(key, utf8(content));
      else {
        const type = headers.get("content-type") || "text/plain";
        const file = new web.File([bytesOf(content)], utf8(unescapeName(filename)), { type });
        form.append(key, file);
      }
      at = next + 2 + delimiter.length;
    }
  };

  web.FormData = FormData;
  install("FormData", FormData);
});
