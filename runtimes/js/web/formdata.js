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

  web.FormData = FormData;
  install("FormData", FormData);
});
