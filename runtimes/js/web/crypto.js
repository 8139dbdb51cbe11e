// crypto.getRandomValues / randomUUID (the host's entropy, drawn at each call:
// nothing random exists before the agent asks, so a snapshot holds none) and
// crypto.subtle.digest (SHA-1/256/384/512, computed in the engine's C shim).
(function (web) {
  const { native, install, toBytes } = web;

  const INTEGER_ARRAYS = [
    Int8Array,
    Uint8Array,
    Uint8ClampedArray,
    Int16Array,
    Uint16Array,
    Int32Array,
    Uint32Array,
    BigInt64Array,
    BigUint64Array,
  ];

  function getRandomValues(array) {
    if (!INTEGER_ARRAYS.some((T) => array instanceof T)) {
      throw new DOMException("The data argument must be an integer-type TypedArray", "TypeMismatchError");
    }
    if (array.byteLength > 65536) {
      throw new DOMException(
        `The ArrayBufferView's byte length (${array.byteLength}) exceeds the number of bytes of entropy available via this API (65536)`,
        "QuotaExceededError",
      );
    }
    native.randomFill(new Uint8Array(array.buffer, array.byteOffset, array.byteLength));
    return array;
  }

  const hex = (b) => (b < 16 ? "0" : "") + b.toString(16);

  function randomUUID() {
    const b = new Uint8Array(16);
    native.randomFill(b);
    b[6] = (b[6] & 0x0f) | 0x40; // version 4
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    const h = Array.from(b, hex).join("");
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  }

  const DIGESTS = new Map([
    ["sha-1", "SHA-1"],
    ["sha-256", "SHA-256"],
    ["sha-384", "SHA-384"],
    ["sha-512", "SHA-512"],
  ]);

  function bufferSource(data) {
    if (data instanceof ArrayBuffer || ArrayBuffer.isView(data)) return toBytes(data);
    throw new TypeError("data must be an ArrayBuffer or an ArrayBuffer view");
  }

  class SubtleCrypto {
    digest(algorithm, data) {
      return new Promise((resolve) => {
        const name = typeof algorithm === "object" && algorithm !== null ? algorithm.name : algorithm;
        const alg = DIGESTS.get(String(name).toLowerCase());
        if (!alg) throw new DOMException(`Unrecognized algorithm name`, "NotSupportedError");
        // Copy first: the caller may change its buffer after this call returns.
        const bytes = bufferSource(data).slice();
        resolve(native.digest(alg, bytes).buffer);
      });
    }
  }
  // The rest of SubtleCrypto, by name and WebIDL length: each rejects.
  const UNAVAILABLE = { encrypt: 3, decrypt: 3, sign: 3, verify: 4, generateKey: 3, importKey: 5, exportKey: 2, deriveBits: 2, deriveKey: 5, wrapKey: 4, unwrapKey: 7 };
  for (const [name, length] of Object.entries(UNAVAILABLE)) {
    const method = {
      [name]() {
        return Promise.reject(new DOMException(`crypto.subtle.${name} is not available in hugind`, "NotSupportedError"));
      },
    }[name];
    Object.defineProperty(method, "length", { value: length });
    Object.defineProperty(SubtleCrypto.prototype, name, { value: method, writable: true, enumerable: false, configurable: true });
  }

  class Crypto {
    #subtle = new SubtleCrypto();
    get subtle() {
      return this.#subtle;
    }
    // Called on anything but a Crypto (an unbound method), WebIDL throws a TypeError.
    getRandomValues(array) {
      if (!(#subtle in this)) throw new TypeError("Illegal invocation");
      return getRandomValues(array);
    }
    randomUUID() {
      if (!(#subtle in this)) throw new TypeError("Illegal invocation");
      return randomUUID();
    }
  }

  install("Crypto", Crypto);
  install("SubtleCrypto", SubtleCrypto);
  install("crypto", new Crypto());
});
