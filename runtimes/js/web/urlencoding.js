// The URL standard's code point classes and percent-encoding: the
// percent-encode sets, UTF-8 percent-encoding and -decoding, and the
// conversion to scalar values (USVString). Shared by url.js, urlhost.js and
// urlsearchparams.js through web.urlEncoding.
(function (web) {
  const { native } = web;

  const ALPHA = /^[A-Za-z]$/;
  const isAlpha = (c) => c !== undefined && ALPHA.test(c);
  const isDigit = (c) => c !== undefined && c >= "0" && c <= "9";
  const isHex = (c) => c !== undefined && /^[0-9A-Fa-f]$/.test(c);

  // ---- percent-encoding ------------------------------------------------------

  const C0 = (cp) => cp < 0x20 || cp > 0x7e;
  const setOf = (base, extra) => (cp) => base(cp) || extra.includes(String.fromCharCode(cp));
  const FRAGMENT = setOf(C0, ' "<>`');
  const QUERY = setOf(C0, ' "#<>');
  const SPECIAL_QUERY = setOf(QUERY, "'");
  // "^" is left as is, as node and the browsers do (the standard now encodes it).
  const PATH = setOf(QUERY, "?`{}");
  const USERINFO = setOf(PATH, "/:;=@[\\]^|");
  const COMPONENT = setOf(USERINFO, "$%&+,");
  const FORM = setOf(COMPONENT, "!'()~");

  const HEXU = "0123456789ABCDEF";
  function encodeByte(b) {
    return "%" + HEXU[b >> 4] + HEXU[b & 15];
  }

  function encodeUtf8(str) {
    return native.encode(str);
  }

  function percentEncode(str, set, spaceAsPlus) {
    let out = "";
    for (const ch of str) {
      const cp = ch.codePointAt(0);
      if (spaceAsPlus && ch === " ") out += "+";
      else if (!set(cp)) out += ch;
      else for (const b of encodeUtf8(ch.length === 1 && cp >= 0xd800 && cp <= 0xdfff ? "\ufffd" : ch)) out += encodeByte(b);
    }
    return out;
  }

  function percentDecodeBytes(str) {
    const bytes = encodeUtf8(str);
    const out = [];
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i];
      if (b === 0x25 && i + 2 < bytes.length && isHexByte(bytes[i + 1]) && isHexByte(bytes[i + 2])) {
        out.push(parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16));
        i += 2;
      } else out.push(b);
    }
    return new Uint8Array(out);
  }
  const isHexByte = (b) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
  // "UTF-8 decode without BOM": a leading U+FEFF is kept.
  const utf8Lossy = (bytes) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
  const toUSV = (s) => String(s).toWellFormed();
  web.urlEncoding = {
    ...{ isAlpha, isDigit, isHex, C0, FRAGMENT, QUERY, SPECIAL_QUERY, PATH, USERINFO, COMPONENT, FORM },
    ...{ percentEncode, percentDecodeBytes, utf8Lossy, toUSV },
  };
});
