// structuredClone: the HTML structured serialize/deserialize, in one pass.
// Supported: primitives, wrappers, Date, RegExp, ArrayBuffer and views, Map,
// Set, arrays, plain objects (own enumerable string keys; prototypes are not
// kept), errors, Blob and File; shared references and cycles are preserved.
// Functions, symbols, WeakMap/WeakSet, promises and other platform objects
// throw a DataCloneError, as do views out of their resized buffer's bounds.
// `transfer` takes ArrayBuffers (copied into the clone, then detached) and
// MessagePorts (a new port takes the original's place in its pair).
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
        return keep(copyBuffer(value));
      case "DataView": {
        // A view whose (resized) buffer no longer holds it cannot be serialized.
        let at;
        try {
          at = [value.byteOffset, value.byteLength];
        } catch {
          throw cannot("An out-of-bounds DataView");
        }
        const buffer = cloneValue(value.buffer, memory);
        // A length-tracking view (on a resizable buffer) stays length-tracking.
        const tracking = value.buffer.resizable && at[0] + at[1] === value.buffer.byteLength && tracksLength(value);
        return keep(tracking ? new DataView(buffer, at[0]) : new DataView(buffer, at[0], at[1]));
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
        // Only an own message is carried, as HTML's serialization of errors says.
        out = keep(Object.hasOwn(value, "message") ? new ERRORS[name](String(value.message)) : new ERRORS[name]());
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
          // ValidateTypedArray throws for a view out of its (resized) buffer's bounds.
          try {
            TYPED_KEYS.call(value);
          } catch {
            throw cannot("An out-of-bounds TypedArray");
          }
          const buffer = cloneValue(value.buffer, memory);
          const Ctor = TYPED[kind];
          const tracking = value.buffer.resizable && tracksLength(value);
          return keep(tracking ? new Ctor(buffer, value.byteOffset) : new Ctor(buffer, value.byteOffset, value.length));
        }
        if (value instanceof web.Blob) return keep(cloneBlob(value));
        throw cannot(kind === "Object" ? "#<Object>" : `#<${kind}>`);
    }
  }

  const TYPED_KEYS = Object.getPrototypeOf(Uint8Array.prototype).keys;
  const TYPED = Object.fromEntries(
    [Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array,
      Float64Array, BigInt64Array, BigUint64Array].map((C) => [C.name, C]),
  );
  if (typeof Float16Array === "function") TYPED.Float16Array = Float16Array;

  // A resizable buffer is copied as a resizable one with the same maximum.
  function copyBuffer(buffer) {
    if (!buffer.resizable) return buffer.slice(0);
    const out = new ArrayBuffer(buffer.byteLength, { maxByteLength: buffer.maxByteLength });
    new Uint8Array(out).set(new Uint8Array(buffer));
    return out;
  }

  // Whether a view on a resizable buffer follows the buffer's length (HTML
  // keeps that in the clone). No getter tells, so grow the buffer by one byte,
  // see whether the view grew, and shrink it back, all before any other code runs.
  function tracksLength(view) {
    const buffer = view.buffer;
    if (buffer.byteLength === buffer.maxByteLength) return false;
    const before = view.byteLength;
    const size = buffer.byteLength;
    buffer.resize(size + 1);
    const grew = view.byteLength !== before;
    buffer.resize(size);
    return grew;
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
      const transfer = options === undefined || options === null || options.transfer === undefined ? [] : Array.from(options.transfer);
      // ArrayBuffers and MessagePorts can be transferred: a buffer is copied into
      // the clone and then detached, as a transfer leaves the original empty; a
      // port is replaced in its pair by a new one (messaging.js), once the clone
      // has succeeded.
      const memory = new Map();
      const buffers = [];
      const ports = [];
      for (const item of transfer) {
        if (item instanceof web.MessagePort) {
          if (memory.has(item)) throw new DOMException("Duplicate MessagePort in the transfer list.", "DataCloneError");
          const moved = web.portShell(item);
          memory.set(item, moved);
          ports.push([item, moved]);
          continue;
        }
        if (tag(item) !== "ArrayBuffer") throw cannot(`Value at index ${transfer.indexOf(item)} does not have a transferable type; it`);
        if (memory.has(item)) throw new DOMException("Duplicate ArrayBuffer in the transfer list.", "DataCloneError");
        if (item.detached) throw new DOMException("An ArrayBuffer is detached and could not be cloned.", "DataCloneError");
        memory.set(item, copyBuffer(item));
        buffers.push(item);
      }
      const out = cloneValue(value, memory);
      for (const buffer of buffers) buffer.transfer();
      for (const [port, moved] of ports) web.portMove(port, moved);
      return out;
    },
  };
  Object.defineProperty(structuredClone, "length", { value: 1 });
  web.structuredClone = structuredClone;
  install("structuredClone", structuredClone);
});
