// web-platform-tests' Encoding cases for TextEncoder and TextDecoder with the
// Unicode encodings (UTF-8, UTF-16LE, UTF-16BE): vectors and names in
// wpt/encoding.json, each applied as its WPT test asserts it. The cases WPT
// runs per legacy encoding (labels and decoding of the single- and multi-byte
// legacy encodings) are left out: hugind's TextDecoder does not offer those
// encodings. __DATA__ is the JSON.
const DATA = __DATA__;
const S = "encoding";
const UNICODE = new Set(["UTF-8", "UTF-16LE", "UTF-16BE"]);
const bytes = (list) => new Uint8Array(list);
const make = (kind, n) => (kind === "SharedArrayBuffer" ? new SharedArrayBuffer(n) : new ArrayBuffer(n));

// api-basics
test(S, "api-basics", "Default encodings", () => {
  eq(new TextEncoder().encoding, "utf-8");
  eq(new TextDecoder().encoding, "utf-8");
});
test(S, "api-basics", "Default inputs", () => {
  arrEq(new TextEncoder().encode(), []);
  arrEq(new TextEncoder().encode(undefined), []);
});
{
  const { sample, bytes: b } = DATA.basics;
  test(S, "api-basics", "Encode/decode round trip: utf-8", () => {
    arrEq([].slice.call(new TextEncoder().encode(sample)), b["utf-8"]);
    eq(new TextDecoder("utf-8").decode(bytes(b["utf-8"])), sample);
    eq(new TextDecoder("utf-8").decode(bytes(b["utf-8"]).buffer), sample);
  });
  for (const enc of ["utf-16le", "utf-16be", "utf-16"]) {
    test(S, "api-basics", `Decode sample: ${enc}`, () => {
      eq(new TextDecoder(enc).decode(bytes(b[enc])), sample);
      eq(new TextDecoder(enc).decode(bytes(b[enc]).buffer), sample);
    });
  }
}

// api-surrogates-utf8
for (const t of DATA.surrogates_utf8) {
  test(S, "api-surrogates-utf8", `Invalid surrogates encoded into UTF-8: ${t.name}`, () => {
    const encoded = new TextEncoder().encode(t.input);
    arrEq([].slice.call(encoded), t.expected);
    eq(new TextDecoder("utf-8").decode(encoded), t.decoded);
  });
}

// encodeInto
for (const t of DATA.encode_into) {
  for (const d of DATA.encode_into_destinations) {
    const name = `encodeInto() with ${t.input} and destination length ${t.destinationLength}, offset ${d.destinationOffset}, filler ${d.filler}`;
    test(S, "encodeInto", name, () => {
      const size = t.destinationLength + d.bufferIncrease;
      const buffer = new ArrayBuffer(size);
      const view = new Uint8Array(buffer, d.destinationOffset, t.destinationLength);
      const whole = new Uint8Array(buffer);
      const control = [];
      for (let i = 0; i < size; i++) {
        const b = d.filler === "random" ? Math.floor(Math.random() * 256) : d.filler;
        control.push(b);
        whole[i] = b;
      }
      const result = new TextEncoder().encodeInto(t.input, view);
      eq(view.byteLength, t.destinationLength);
      eq(view.length, t.destinationLength);
      eq(result.read, t.read);
      eq(result.written, t.written.length);
      for (let i = 0; i < size; i++) {
        const inside = i >= d.destinationOffset && i < d.destinationOffset + t.written.length;
        eq(whole[i], inside ? t.written[i - d.destinationOffset] : control[i], `byte ${i}`);
      }
    });
  }
}
for (const kind of DATA.encode_into_invalid) {
  test(S, "encodeInto", `Invalid encodeInto() destination: ${kind}`, () => {
    const dest = kind === "ArrayBuffer" ? new ArrayBuffer(10) : new globalThis[kind](new ArrayBuffer(0));
    throwsJs(TypeError, () => new TextEncoder().encodeInto("", dest));
  });
}

// textdecoder-fatal
for (const t of DATA.fatal) {
  test(S, "textdecoder-fatal", `Fatal flag: ${t.encoding} - ${t.name}`, () => {
    throwsJs(TypeError, () => new TextDecoder(t.encoding, { fatal: true }).decode(bytes(t.input)));
  });
}
test(S, "textdecoder-fatal", "The fatal attribute of TextDecoder", () => {
  yes("fatal" in new TextDecoder());
  eq(typeof new TextDecoder().fatal, "boolean");
  no(new TextDecoder().fatal);
  yes(new TextDecoder("utf-8", { fatal: true }).fatal);
});
test(S, "textdecoder-fatal", "Error seen with fatal does not prevent future decodes", () => {
  const b = bytes([226, 153, 165]);
  const decoder = new TextDecoder("utf-8", { fatal: true });
  eq(decoder.decode(new DataView(b.buffer, 0, 3)), "\u2665");
  throwsJs(TypeError, () => decoder.decode(new DataView(b.buffer, 0, 2)));
  eq(decoder.decode(new DataView(b.buffer, 0, 3)), "\u2665");
});

// textdecoder-streaming
for (const kind of ["ArrayBuffer", "SharedArrayBuffer"]) {
  const { string, octets } = DATA.streaming;
  for (const [enc, encoded] of Object.entries(octets)) {
    for (let len = 1; len <= 5; len++) {
      test(S, "textdecoder-streaming", `Streaming decode: ${enc}, ${len} byte window (${kind})`, () => {
        const decoder = new TextDecoder(enc);
        let out = "";
        for (let i = 0; i < encoded.length; i += len) {
          const part = encoded.slice(i, i + len);
          const view = new Uint8Array(make(kind, part.length));
          view.set(part);
          out += decoder.decode(view, { stream: true });
        }
        out += decoder.decode();
        eq(out, string);
      });
    }
  }
  test(S, "textdecoder-streaming", `Streaming decode: UTF-8 chunk tests (${kind})`, () => {
    const decoder = new TextDecoder();
    for (const [input, stream, expected] of DATA.streaming.chunks) {
      let view;
      if (input !== null) {
        view = new Uint8Array(make(kind, input.length));
        view.set(input);
      }
      const got = input === null ? decoder.decode() : stream ? decoder.decode(view, { stream: true }) : decoder.decode(view);
      eq(got, expected);
    }
  });
}

// textdecoder-ignorebom
for (const t of DATA.ignore_bom) {
  test(S, "textdecoder-ignorebom", `BOM is ignored if ignoreBOM option is specified: ${t.encoding}`, () => {
    const b = bytes(t.bytes);
    let decoder = new TextDecoder(t.encoding, { ignoreBOM: true });
    eq(decoder.decode(b), "\uFEFFabc");
    eq(decoder.decode(b), "\uFEFFabc");
    decoder = new TextDecoder(t.encoding, { ignoreBOM: false });
    eq(decoder.decode(b), "abc");
    eq(decoder.decode(b), "abc");
    decoder = new TextDecoder(t.encoding);
    eq(decoder.decode(b), "abc");
    eq(decoder.decode(b), "abc");
  });
}
test(S, "textdecoder-ignorebom", "The ignoreBOM attribute of TextDecoder", () => {
  yes("ignoreBOM" in new TextDecoder());
  eq(typeof new TextDecoder().ignoreBOM, "boolean");
  no(new TextDecoder().ignoreBOM);
  yes(new TextDecoder("utf-8", { ignoreBOM: true }).ignoreBOM);
});

// textdecoder-byte-order-marks
for (const t of DATA.bom.cases) {
  test(S, "textdecoder-byte-order-marks", `Byte-order marks: ${t.encoding}`, () => {
    const decoder = new TextDecoder(t.encoding);
    eq(decoder.decode(bytes(t.bytes)), DATA.bom.string);
    eq(decoder.decode(bytes(t.bom.concat(t.bytes))), DATA.bom.string);
    for (const o of DATA.bom.cases) {
      if (o !== t && decoder.decode(bytes(o.bom.concat(t.bytes))) === DATA.bom.string) fail("a mismatched BOM was dropped");
    }
  });
}

// textdecoder-arguments
for (const [name, args] of [
  ["TextDecoder decode() with explicit undefined", [undefined]],
  ["TextDecoder decode() with undefined and undefined", [undefined, undefined]],
  ["TextDecoder decode() with undefined and options", [undefined, {}]],
]) {
  test(S, "textdecoder-arguments", name, () => {
    const decoder = new TextDecoder();
    eq(decoder.decode(...args), "");
    decoder.decode(bytes([0xc9]), { stream: true });
    eq(decoder.decode(...args), "\uFFFD");
  });
}

// textdecoder-fatal-streaming
test(S, "textdecoder-fatal-streaming", "Fatal flag, non-streaming cases", () => {
  for (const [enc, seq] of [["utf-8", [0xc0]], ["utf-16le", [0x00]], ["utf-16be", [0x00]]]) {
    throwsJs(TypeError, () => new TextDecoder(enc, { fatal: true }).decode(bytes(seq)));
    // As WPT writes it: a Uint8Array of [[byte]], which is one byte.
    eq(new TextDecoder(enc).decode(new Uint8Array([seq])), "\uFFFD");
  }
});
test(S, "textdecoder-fatal-streaming", "Fatal flag, streaming cases", () => {
  const decoder = new TextDecoder("utf-16le", { fatal: true });
  const odd = bytes([0x00]);
  const even = bytes([0x00, 0x00]);
  eq(decoder.decode(odd, { stream: true }), "");
  eq(decoder.decode(odd), "\u0000");
  throwsJs(TypeError, () => {
    decoder.decode(even, { stream: true });
    decoder.decode(odd);
  });
  throwsJs(TypeError, () => {
    decoder.decode(odd, { stream: true });
    decoder.decode(even);
  });
  eq(decoder.decode(even, { stream: true }), "\u0000");
  eq(decoder.decode(even), "\u0000");
});

// textdecoder-eof
test(S, "textdecoder-eof", "TextDecoder end-of-queue handling", () => {
  for (const [input, expected] of DATA.eof) eq(new TextDecoder().decode(bytes(input)), expected, JSON.stringify(input));
});
test(S, "textdecoder-eof", "TextDecoder end-of-queue handling using stream: true", () => {
  const decoder = new TextDecoder();
  DATA.eof_stream.forEach(([input, stream, expected], i) => {
    const got = input === null ? decoder.decode() : stream ? decoder.decode(bytes(input), { stream: true }) : decoder.decode(bytes(input));
    if (expected !== null) eq(got, expected, `step ${i}`);
  });
});

// textdecoder-copy
for (const kind of ["ArrayBuffer", "SharedArrayBuffer"]) {
  test(S, "textdecoder-copy", `Modify buffer after passing it in (${kind})`, () => {
    const buf = make(kind, 2);
    const view = new Uint8Array(buf);
    const buf2 = make(kind, 2);
    const view2 = new Uint8Array(buf2);
    const decoder = new TextDecoder("utf-8");
    view[0] = 0xef;
    view[1] = 0xbb;
    view2[0] = 0xbf;
    view2[1] = 0x40;
    eq(decoder.decode(buf, { stream: true }), "");
    view[0] = 0x01;
    view[1] = 0x02;
    eq(decoder.decode(buf2), "@");
  });
}

// textencoder-constructor-non-utf: every encoding for TextEncoder, the Unicode ones for TextDecoder.
for (const e of DATA.encodings) {
  if (e.name !== "replacement" && UNICODE.has(e.name)) {
    test(S, "textencoder-constructor-non-utf", `Encoding argument supported for decode: ${e.name}`, () => {
      eq(new TextDecoder(e.name).encoding, e.name.toLowerCase());
    });
  }
  test(S, "textencoder-constructor-non-utf", `Encoding argument not considered for encode: ${e.name}`, () => {
    eq(new TextEncoder(e.name).encoding, "utf-8");
  });
}

// textencoder-utf16-surrogates
for (const t of DATA.utf16_encode) {
  test(S, "textencoder-utf16-surrogates", `USVString handling: ${t.name}`, () => {
    eq(new TextDecoder().decode(new TextEncoder().encode(t.input)), t.expected);
  });
}
test(S, "textencoder-utf16-surrogates", "USVString default", () => eq(new TextEncoder().encode().length, 0));

// textdecoder-utf16-surrogates
for (const t of DATA.utf16_decode) {
  test(S, "textdecoder-utf16-surrogates", `${t.encoding} - ${t.name}`, () => {
    eq(new TextDecoder(t.encoding).decode(bytes(t.input)), t.expected);
  });
  test(S, "textdecoder-utf16-surrogates", `${t.encoding} - ${t.name} (fatal flag set)`, () => {
    throwsJs(TypeError, () => new TextDecoder(t.encoding, { fatal: true }).decode(bytes(t.input)));
  });
}

// textdecoder-labels and api-invalid-label, for the Unicode encodings' labels.
for (const e of DATA.encodings.filter((e) => UNICODE.has(e.name))) {
  for (const label of e.labels) {
    test(S, "textdecoder-labels", `${label} => ${e.name}`, () => {
      const want = e.name.toLowerCase();
      eq(new TextDecoder(label).encoding, want);
      eq(new TextDecoder(label.toUpperCase()).encoding, want);
      for (const ws of DATA.label_whitespace) {
        eq(new TextDecoder(ws + label).encoding, want);
        eq(new TextDecoder(label + ws).encoding, want);
        eq(new TextDecoder(ws + label + ws).encoding, want);
      }
    });
  }
}
const invalid = ["invalid-invalidLabel"];
for (const e of DATA.encodings.filter((e) => UNICODE.has(e.name))) {
  for (const label of e.labels) {
    for (const ws of DATA.invalid_label_whitespace) invalid.push(ws + label, label + ws, ws + label + ws);
  }
}
for (const input of invalid) {
  test(S, "api-invalid-label", `Invalid label ${JSON.stringify(input)} should be rejected by TextDecoder.`, () => {
    throwsJs(RangeError, () => new TextDecoder(input));
  });
}

// api-replacement-encodings
for (const e of DATA.encodings.filter((e) => e.name === "replacement")) {
  for (const label of e.labels) {
    test(S, "api-replacement-encodings", `Label for "replacement" should be rejected by API: ${label}`, () => {
      throwsJs(RangeError, () => new TextDecoder(label));
    });
  }
}

await runAll();
