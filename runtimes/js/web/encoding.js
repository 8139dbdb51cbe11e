// TextEncoder and TextDecoder (UTF-8 only), with the streaming decode of the
// Encoding standard: an incomplete sequence at the end of a chunk waits for
// the next one, and each bad sequence becomes one U+FFFD (its maximal subpart).
(function ({ native, install, toBytes }) {

  // A lone surrogate is not a scalar value: it encodes as U+FFFD (EF BF BD),
  // never as its 3-byte CESU-8 form.
  const wellFormed = (s) => (s.isWellFormed() ? s : s.toWellFormed());

  class TextEncoder {
    get encoding() {
      return "utf-8";
    }
    encode(input = "") {
      return native.encode(wellFormed(String(input)));
    }
    encodeInto(source, destination) {
      if (!(destination instanceof Uint8Array)) {
        throw new TypeError("The \"dest\" argument must be an instance of Uint8Array.");
      }
      const text = String(source);
      let read = 0;
      let written = 0;
      for (const ch of text) {
        const bytes = native.encode(wellFormed(ch));
        if (written + bytes.length > destination.length) break;
        destination.set(bytes, written);
        written += bytes.length;
        read += ch.length;
      }
      return { read, written };
    }
  }

  // The bounds a continuation byte must fall in, by lead byte (Encoding standard).
  function sequenceOf(lead) {
    if (lead >= 0xc2 && lead <= 0xdf) return { need: 1, lo: 0x80, hi: 0xbf };
    if (lead >= 0xe0 && lead <= 0xef) {
      return { need: 2, lo: lead === 0xe0 ? 0xa0 : 0x80, hi: lead === 0xed ? 0x9f : 0xbf };
    }
    if (lead >= 0xf0 && lead <= 0xf4) {
      return { need: 3, lo: lead === 0xf0 ? 0x90 : 0x80, hi: lead === 0xf4 ? 0x8f : 0xbf };
    }
    return null;
  }

  // How many bytes at the end of `bytes` start a valid sequence not yet complete.
  function incompleteTail(bytes) {
    for (let back = 1; back <= 3 && back <= bytes.length; back++) {
      const at = bytes.length - back;
      const seq = sequenceOf(bytes[at]);
      if (!seq) {
        if (bytes[at] >= 0x80 && bytes[at] <= 0xbf) continue;
        return 0;
      }
      if (back > seq.need) return 0; // complete (or too long): decode it now
      for (let i = at + 1; i < bytes.length; i++) {
        const lo = i === at + 1 ? seq.lo : 0x80;
        const hi = i === at + 1 ? seq.hi : 0xbf;
        if (bytes[i] < lo || bytes[i] > hi) return 0;
      }
      return back;
    }
    return 0;
  }

  // The slow path, only for input with bad sequences: the Encoding standard's
  // decoder, one U+FFFD per maximal subpart of an ill-formed sequence.
  function decodeLossy(bytes) {
    let out = "";
    let i = 0;
    while (i < bytes.length) {
      const b = bytes[i];
      if (b < 0x80) {
        out += String.fromCharCode(b);
        i++;
        continue;
      }
      const seq = sequenceOf(b);
      if (!seq) {
        out += "\ufffd";
        i++;
        continue;
      }
      let cp = b & (seq.need === 1 ? 0x1f : seq.need === 2 ? 0x0f : 0x07);
      let j = 1;
      for (; j <= seq.need && i + j < bytes.length; j++) {
        const c = bytes[i + j];
        const lo = j === 1 ? seq.lo : 0x80;
        const hi = j === 1 ? seq.hi : 0xbf;
        if (c < lo || c > hi) break;
        cp = (cp << 6) | (c & 0x3f);
      }
      if (j === seq.need + 1) {
        out += String.fromCodePoint(cp);
        i += j;
      } else {
        out += "\ufffd";
        i += j;
      }
    }
    return out;
  }

  class TextDecoder {
    #fatal;
    #ignoreBOM;
    #pending = new Uint8Array(0);
    #started = false;
    constructor(label = "utf-8", options = {}) {
      const name = String(label).trim().toLowerCase();
      if (name !== "utf-8" && name !== "utf8" && name !== "unicode-1-1-utf-8") {
        throw new RangeError(`The "${label}" encoding is not supported`);
      }
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() {
      return "utf-8";
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input = undefined, options = {}) {
      const stream = Boolean(options && options.stream);
      let bytes = input === undefined ? new Uint8Array(0) : toBytes(input);
      if (this.#pending.length) {
        const joined = new Uint8Array(this.#pending.length + bytes.length);
        joined.set(this.#pending);
        joined.set(bytes, this.#pending.length);
        bytes = joined;
      }
      const keep = stream ? incompleteTail(bytes) : 0;
      this.#pending = keep ? bytes.slice(bytes.length - keep) : new Uint8Array(0);
      if (keep) bytes = bytes.subarray(0, bytes.length - keep);
      const first = !this.#started;
      // The stream has started once it decoded a byte; a BOM still incomplete waits.
      this.#started = stream && (this.#started || bytes.length > 0);
      if (first && !this.#ignoreBOM && bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
        bytes = bytes.subarray(3);
      }
      if (this.#fatal) {
        try {
          return native.decode(bytes, true);
        } catch (e) {
          this.#pending = new Uint8Array(0);
          this.#started = false;
          throw e;
        }
      }
      try {
        return native.decode(bytes, true);
      } catch (_) {
        return decodeLossy(bytes);
      }
    }
  }

  install("TextEncoder", TextEncoder);
  install("TextDecoder", TextDecoder);
});
