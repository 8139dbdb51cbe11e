// Host parsing after the WHATWG URL standard: IPv4 in any of its spellings,
// IPv6 (with its compressed serialization), opaque hosts of non-special URLs,
// and domains, which go through web.domainToASCII (idna.js). Sets
// web.parseHost(input, notSpecial) -> the serialized host, or null on failure.
(function (web) {
  const { percentEncode, percentDecodeBytes, utf8Lossy, C0, isDigit, isHex } = web.urlEncoding;

  // ---- hosts -------------------------------------------------------------------

  const FORBIDDEN_HOST = new Set(["\0", "\t", "\n", "\r", " ", "#", "/", ":", "<", ">", "?", "@", "[", "\\", "]", "^", "|"]);
  const FORBIDDEN_DOMAIN = new Set([...FORBIDDEN_HOST, "%"]);
  const isForbiddenDomainCp = (c) => FORBIDDEN_DOMAIN.has(c) || c.codePointAt(0) <= 0x1f || c === "\x7f";

  function parseIPv4Number(s) {
    if (s === "") return NaN;
    let radix = 10;
    if (s.length >= 2 && (s.startsWith("0x") || s.startsWith("0X"))) {
      s = s.slice(2);
      radix = 16;
    } else if (s.length >= 2 && s[0] === "0") {
      s = s.slice(1);
      radix = 8;
    }
    if (s === "") return 0;
    const re = radix === 10 ? /^[0-9]+$/ : radix === 16 ? /^[0-9A-Fa-f]+$/ : /^[0-7]+$/;
    if (!re.test(s)) return NaN;
    return parseInt(s, radix);
  }

  function endsInNumber(input) {
    const parts = input.split(".");
    if (parts[parts.length - 1] === "") {
      if (parts.length === 1) return false;
      parts.pop();
    }
    const last = parts[parts.length - 1];
    if (last !== "" && /^[0-9]+$/.test(last)) return true;
    return !Number.isNaN(parseIPv4Number(last)) && /^0[xX][0-9A-Fa-f]*$/.test(last);
  }

  function parseIPv4(input) {
    const parts = input.split(".");
    if (parts[parts.length - 1] === "" && parts.length > 1) parts.pop();
    if (parts.length > 4) return null;
    const nums = parts.map(parseIPv4Number);
    if (nums.some(Number.isNaN)) return null;
    if (nums.slice(0, -1).some((n) => n > 255)) return null;
    if (nums[nums.length - 1] >= 256 ** (5 - nums.length)) return null;
    let ipv4 = nums[nums.length - 1];
    for (let i = 0; i < nums.length - 1; i++) ipv4 += nums[i] * 256 ** (3 - i);
    return ipv4;
  }

  const serializeIPv4 = (n) => [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");

  function parseIPv6(input) {
    const address = [0, 0, 0, 0, 0, 0, 0, 0];
    let piece = 0;
    let compress = null;
    let p = 0;
    const c = () => input[p];
    if (c() === ":") {
      if (input[p + 1] !== ":") return null;
      p += 2;
      compress = ++piece;
    }
    while (c() !== undefined) {
      if (piece === 8) return null;
      if (c() === ":") {
        if (compress !== null) return null;
        p++;
        compress = ++piece;
        continue;
      }
      let value = 0;
      let length = 0;
      while (length < 4 && isHex(c())) {
        value = value * 16 + parseInt(c(), 16);
        p++;
        length++;
      }
      if (c() === ".") {
        if (length === 0) return null;
        p -= length;
        if (piece > 6) return null;
        let seen = 0;
        while (c() !== undefined) {
          let v4 = null;
          if (seen > 0) {
            if (c() === "." && seen < 4) p++;
            else return null;
          }
          if (!isDigit(c())) return null;
          while (isDigit(c())) {
            const n = Number(c());
            if (v4 === null) v4 = n;
            else if (v4 === 0) return null;
            else v4 = v4 * 10 + n;
            if (v4 > 255) return null;
            p++;
          }
          address[piece] = address[piece] * 256 + v4;
          seen++;
          if (seen === 2 || seen === 4) piece++;
        }
        if (seen !== 4) return null;
        break;
      } else if (c() === ":") {
        p++;
        if (c() === undefined) return null;
      } else if (c() !== undefined) return null;
      address[piece++] = value;
    }
    if (compress !== null) {
      let swaps = piece - compress;
      piece = 7;
      while (piece !== 0 && swaps > 0) {
        const t = address[piece];
        address[piece] = address[compress + swaps - 1];
        address[compress + swaps - 1] = t;
        piece--;
        swaps--;
      }
    } else if (piece !== 8) return null;
    return address;
  }

  function serializeIPv6(a) {
    // The first longest run of two or more zero pieces is compressed to "::".
    let best = -1;
    let bestLen = 1;
    for (let i = 0; i < 8; ) {
      if (a[i] !== 0) {
        i++;
        continue;
      }
      let j = i;
      while (j < 8 && a[j] === 0) j++;
      if (j - i > bestLen) {
        best = i;
        bestLen = j - i;
      }
      i = j;
    }
    let out = "";
    let ignore0 = false;
    for (let i = 0; i < 8; i++) {
      if (ignore0 && a[i] === 0) continue;
      ignore0 = false;
      if (best === i) {
        out += i === 0 ? "::" : ":";
        ignore0 = true;
        continue;
      }
      out += a[i].toString(16);
      if (i !== 7) out += ":";
    }
    return "[" + out + "]";
  }

  function parseOpaqueHost(input) {
    for (const ch of input) if (ch !== "%" && FORBIDDEN_HOST.has(ch)) return null;
    return percentEncode(input, C0, false);
  }

  // -> string (serialized host) or null on failure
  function parseHost(input, notSpecial) {
    if (input.startsWith("[")) {
      if (!input.endsWith("]")) return null;
      const a = parseIPv6(input.slice(1, -1));
      return a ? serializeIPv6(a) : null;
    }
    if (notSpecial) return parseOpaqueHost(input);
    const domain = utf8Lossy(percentDecodeBytes(input));
    const ascii = web.domainToASCII(domain);
    if (ascii === null) return null;
    for (const ch of ascii) if (isForbiddenDomainCp(ch)) return null;
    if (endsInNumber(ascii)) {
      const v4 = parseIPv4(ascii);
      return v4 === null ? null : serializeIPv4(v4);
    }
    return ascii;
  }

  web.parseHost = parseHost;
});
