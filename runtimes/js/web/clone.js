// structuredClone: the HTML structured serialize/deserialize, in one pass.
// Supported: primitives, wrappers, Date, RegExp, ArrayBuffer and views, Map,
// Set, arrays, plain objects (own enumerable string keys; prototypes are not
// kept), errors, Blob and File; shared references and cycles are preserved.
// Functions, symbols, WeakMap/WeakSet, promises and other platform objects
// throw a DataCloneError. `transfer` is accepted only when empty.
(function (web) {
  const { install } = web;

  const ERRORS = { Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError };
  const cannot = (what) => new DOMException(`${what} could not be cloned.`, "DataCloneError");
  const tag = (v) => Object.prototype.toString.call(v).slice(8, -1);

  function cloneValue(value, memory) {
    if (typeof value === "function") throw cannot(String(value).split("\n")[0].slice(0, 60));
    if (typeof value === "symbol") throw cannot(value.toString());
    if (value === null || typeof value !== "object") return value;
    if (memory.has(value)) return memory.get(value);
    const kind = tag(value);
    let out;
    const keep = (copy) => (memory.set(value, copy), copy);
    switch (kind) {
      case "Boolean":
      case "Number":
      case "String":
      case "BigInt":
        return keep(Object(value.valueOf()));
      case "Date":
        return keep(new Date(value.getTime()));
      case "RegExp":
        return keep(new RegExp(value.source, value.flags));
      case "ArrayBuffer":
        return keep(value.slice(0));
      case "DataView": {
        const buffer = cloneValue(value.buffer, memory);
        return keep(new DataView(buffer, value.byteOffset, value.byteLength));
      }
      case "Map":
        out = keep(new Map());
        for (const [k, v] of value) out.set(cloneValue(k, memory), cloneValue(v, memory));
        return out;
      case "Set":
        out = keep(new Set());
        for (const v of value) out.add(cloneValue(v, memory));
        return out;
      case "Error": {
        const name = Object.prototype.hasOwnProperty.call(ERRORS, value.name) ? value.name : "Error";
        out = keep(new ERRORS[name](value.message));
        if ("stack" in value) Object.defineProperty(out, "stack", { value: value.stack, writable: true, configurable: true });
        if ("cause" in value) out.cause = cloneValue(value.cause, memory);
        return out;
      }
      case "Array":
        out = keep(new Array(value.length));
        for (const k of Object.keys(value)) out[k] = cloneValue(value[k], memory);
        return out;
      case "Object":
        if (value instanceof web.Blob) return keep(cloneBlob(value));
        out = keep({});
        for (const k of Object.keys(value)) out[k] = cloneValue(value[k], memory);
        return out;
      default:
        if (ArrayBuffer.isView(value)) {
          const buffer = cloneValue(value.buffer, memory);
          return keep(new value.constructor(buffer, value.byteOffset, value.length));
        }
        if (value instanceof web.Blob) return keep(cloneBlob(value));
        throw cannot(kind === "Object" ? "#<Object>" : `#<${kind}>`);
    }
  }

  function cloneBlob(blob) {
    const bytes = web.blobBytes(blob);
    if (blob instanceof web.File) {
      return new web.File([bytes], blob.name, { type: blob.type, lastModified: blob.lastModified });
    }
    return new web.Blob([bytes], { type: blob.type });
  }

  // A method, so not a constructor; WebIDL's length is 1 (options is optional).
  const { structuredClone } = {
    structuredClone(...args) {
      if (args.length === 0) throw new TypeError("The \"value\" argument must be specified");
      const [value, options] = args;
      if (options && options.transfer && Array.from(options.transfer).length) {
        throw new DOMException("Transferring objects is not supported in hugind", "DataCloneError");
      }
      return cloneValue(value, new Map());
    },
  };
  Object.defineProperty(structuredClone, "length", { value: 1 });
  install("structuredClone", structuredClone);
});
