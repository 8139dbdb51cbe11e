// TextEncoder and TextDecoder (UTF-8; TextDecoder also UTF-16LE and
// UTF-16BE), with the streaming decode of the Encoding standard: an
// incomplete sequence at the end of a chunk waits for the next one, and each
// bad sequence becomes one U+FFFD (its maximal subpart).
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

  // The labels of the encodings offered (Encoding standard, "Encodings"):
  // UTF-8 and the two UTF-16s. The legacy single- and multi-byte encodings
  // are not, and their labels are a RangeError, as an unknown label is.
  const LABELS = new Map();
  for (const [name, labels] of [
    ["utf-8", "unicode-1-1-utf-8 unicode11utf8 unicode20utf8 utf-8 utf8 x-unicode20utf8"],
    ["utf-16le", "csunicode iso-10646-ucs-2 ucs-2 unicode unicodefeff utf-16 utf-16le"],
    ["utf-16be", "unicodefffe utf-16be"],
  ]) {
    for (const label of labels.split(" ")) LABELS.set(label, name);
  }
  const BOMS = { "utf-8": [0xef, 0xbb, 0xbf], "utf-16le": [0xff, 0xfe], "utf-16be": [0xfe, 0xff] };
  // Leading and trailing ASCII whitespace is not part of a label (U+000B is not one).
  const trimLabel = (s) => s.replace(/^[\t\n\f\r ]+|[\t\n\f\r ]+$/g, "");

  // BufferSource, a SharedArrayBuffer's view too; the bytes are copied when
  // they may change under the decoder (a shared buffer).
  function bytesOf(input) {
    if (typeof SharedArrayBuffer === "function" && input instanceof SharedArrayBuffer) {
      return new Uint8Array(input).slice();
    }
    const bytes = toBytes(input);
    return typeof SharedArrayBuffer === "function" && bytes.buffer instanceof SharedArrayBuffer ? bytes.slice() : bytes;
  }

  const decodeError = () => new TypeError("The encoded data was not valid for encoding");

  // UTF-16 decoding of whole code units (the Encoding standard's UTF-16
  // decoder): an unpaired surrogate is an error. Returns the text and how many
  // bytes at the end were left undecoded: an odd byte, or a lead surrogate
  // whose trail may come in the next chunk (only kept when `stream`).
  function decodeUtf16(bytes, bigEndian, fatal, stream) {
    let out = "";
    const units = bytes.length >> 1;
    let i = 0;
    for (; i < units; i++) {
      const a = bytes[2 * i];
      const b = bytes[2 * i + 1];
      const cu = bigEndian ? (a << 8) | b : (b << 8) | a;
      if (cu >= 0xd800 && cu <= 0xdbff) {
        if (i + 1 === units) {
          if (stream) break;
          if (fatal) throw decodeError();
          out += "\ufffd";
          continue;
        }
        const c = bytes[2 * i + 2];
        const d = bytes[2 * i + 3];
        const next = bigEndian ? (c << 8) | d : (d << 8) | c;
        if (next >= 0xdc00 && next <= 0xdfff) {
          out += String.fromCharCode(cu, next);
          i++;
        } else {
          if (fatal) throw decodeError();
          out += "\ufffd";
        }
      } else if (cu >= 0xdc00 && cu <= 0xdfff) {
        if (fatal) throw decodeError();
        out += "\ufffd";
      } else out += String.fromCharCode(cu);
    }
    const left = bytes.length - 2 * i;
    // At the end of the stream, a lone byte (after a lead surrogate or not) is one error.
    if (!stream && left > 0) {
      if (fatal) throw decodeError();
      return { text: out + "\ufffd", left: 0 };
    }
    return { text: out, left };
  }

  class TextDecoder {
    #encoding;
    #fatal;
    #ignoreBOM;
    #pending = new Uint8Array(0);
    #started = false;
    constructor(label = "utf-8", options = {}) {
      const name = LABELS.get(trimLabel(String(label)).toLowerCase());
      if (name === undefined) throw new RangeError(`The "${label}" encoding is not supported`);
      if (options !== undefined && options !== null && typeof options !== "object" && typeof options !== "function") {
        throw new TypeError("TextDecoder: options must be an object");
      }
      this.#encoding = name;
      this.#fatal = Boolean(options && options.fatal);
      this.#ignoreBOM = Boolean(options && options.ignoreBOM);
    }
    get encoding() {
      return this.#encoding;
    }
    get fatal() {
      return this.#fatal;
    }
    get ignoreBOM() {
      return this.#ignoreBOM;
    }
    decode(input = undefined, options = {}) {
      const stream = Boolean(options && options.stream);
      let bytes = input === undefined ? new Uint8Array(0) : bytesOf(input);
      if (this.#pending.length) {
        const joined = new Uint8Array(this.#pending.length + bytes.length);
        joined.set(this.#pending);
        joined.set(bytes, this.#pending.length);
        bytes = joined;
      }
      const utf8 = this.#encoding === "utf-8";
      const bom = BOMS[this.#encoding];
      // A BOM still incomplete at the start of a stream waits for more bytes.
      if (!this.#started && stream && bytes.length < bom.length && bom.slice(0, bytes.length).every((b, i) => bytes[i] === b)) {
        this.#pending = bytes.slice();
        return "";
      }
      const keep = utf8 && stream ? incompleteTail(bytes) : 0;
      this.#pending = keep ? bytes.slice(bytes.length - keep) : new Uint8Array(0);
      if (keep) bytes = bytes.subarray(0, bytes.length - keep);
      const first = !this.#started;
      // The stream has started once it decoded a byte.
      this.#started = stream && (this.#started || bytes.length > 0);
      if (first && !this.#ignoreBOM && bytes.length >= bom.length && bom.every((b, i) => bytes[i] === b)) {
        bytes = bytes.subarray(bom.length);
      }
      if (!utf8) {
        try {
          const { text, left } = decodeUtf16(bytes, this.#encoding === "utf-16be", this.#fatal, stream);
          this.#pending = left ? bytes.slice(bytes.length - left) : new Uint8Array(0);
          return text;
        } catch (e) {
          this.#pending = new Uint8Array(0);
          this.#started = false;
          throw e;
        }
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
