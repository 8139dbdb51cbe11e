// URL and URLSearchParams after the WHATWG URL standard: its basic URL parser
// (a state machine over code points, with the state overrides the setters
// use), host parsing (IPv4 in any of its spellings, IPv6, opaque hosts) and
// the application/x-www-form-urlencoded format. Domains go through
// web.domainToASCII (idna.js).
(function (web) {
  const { install, native } = web;

  const SPECIAL = { "ftp:": 21, "file:": null, "http:": 80, "https:": 443, "ws:": 80, "wss:": 443 };
  const isSpecialScheme = (s) => Object.prototype.hasOwnProperty.call(SPECIAL, s + ":");
  const defaultPort = (s) => (isSpecialScheme(s) ? SPECIAL[s + ":"] : null);

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
  const utf8Lossy = (bytes) => new TextDecoder().decode(bytes);

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

  // ---- the basic URL parser --------------------------------------------------------

  const isWindowsDriveLetter = (s, normalizedOnly) =>
    s.length === 2 && isAlpha(s[0]) && (s[1] === ":" || (!normalizedOnly && s[1] === "|"));
  function startsWithDriveLetter(cps, p) {
    if (cps.length - p < 2) return false;
    if (!isWindowsDriveLetter(cps[p] + cps[p + 1], false)) return false;
    if (cps.length - p === 2) return true;
    return ["/", "\\", "?", "#"].includes(cps[p + 2]);
  }
  const isSingleDot = (s) => s === "." || s.toLowerCase() === "%2e";
  const isDoubleDot = (s) => [".."].includes(s) || ["%2e.", ".%2e", "%2e%2e"].includes(s.toLowerCase());

  function shortenPath(url) {
    if (url.scheme === "file" && url.path.length === 1 && isWindowsDriveLetter(url.path[0], true)) return;
    url.path.pop();
  }

  const newRecord = () => ({
    scheme: "",
    username: "",
    password: "",
    host: null,
    port: null,
    path: [],
    opaque: false,
    query: null,
    fragment: null,
  });

  const copyRecord = (r) => ({ ...r, path: r.opaque ? r.path : r.path.slice() });

  // Returns the record, or null on failure. With `override`, `url` is changed
  // in place and the return is false when the state machine stops early.
  function basicParse(input, base, url, override) {
    if (!url) {
      url = newRecord();
      input = input.replace(/^[\x00-\x20]+|[\x00-\x20]+$/g, "");
    }
    input = input.replace(/[\t\n\r]/g, "");
    let state = override || "scheme start";
    let buffer = "";
    let atSign = false;
    let insideBrackets = false;
    let passwordToken = false;
    const cps = Array.from(input);
    const special = () => isSpecialScheme(url.scheme);
    for (let p = 0; p <= cps.length; p++) {
      const c = cps[p]; // undefined is EOF
      switch (state) {
        case "scheme start":
          if (isAlpha(c)) {
            buffer += c.toLowerCase();
            state = "scheme";
          } else if (!override) {
            state = "no scheme";
            p--;
          } else return false;
          break;
        case "scheme":
          if (c !== undefined && /^[A-Za-z0-9+\-.]$/.test(c)) buffer += c.toLowerCase();
          else if (c === ":") {
            if (override) {
              if (isSpecialScheme(url.scheme) !== isSpecialScheme(buffer)) return false;
              if ((url.username || url.password || url.port !== null) && buffer === "file") return false;
              if (url.scheme === "file" && url.host === "") return false;
            }
            url.scheme = buffer;
            if (override) {
              if (url.port === defaultPort(url.scheme)) url.port = null;
              return false;
            }
            buffer = "";
            if (url.scheme === "file") state = "file";
            else if (special() && base && base.scheme === url.scheme) state = "special relative or authority";
            else if (special()) state = "special authority slashes";
            else if (cps[p + 1] === "/") {
              state = "path or authority";
              p++;
            } else {
              url.opaque = true;
              url.path = "";
              state = "opaque path";
            }
          } else if (!override) {
            buffer = "";
            state = "no scheme";
            p = -1;
          } else return false;
          break;
        case "no scheme":
          if (!base || (base.opaque && c !== "#")) return null;
          if (base.opaque && c === "#") {
            url.scheme = base.scheme;
            url.path = base.path;
            url.opaque = true;
            url.query = base.query;
            url.fragment = "";
            state = "fragment";
          } else if (base.scheme !== "file") {
            state = "relative";
            p--;
          } else {
            state = "file";
            p--;
          }
          break;
        case "special relative or authority":
          if (c === "/" && cps[p + 1] === "/") {
            state = "special authority ignore slashes";
            p++;
          } else {
            state = "relative";
            p--;
          }
          break;
        case "path or authority":
          if (c === "/") state = "authority";
          else {
            state = "path";
            p--;
          }
          break;
        case "relative":
          url.scheme = base.scheme;
          if (c === "/") state = "relative slash";
          else if (special() && c === "\\") state = "relative slash";
          else {
            url.username = base.username;
            url.password = base.password;
            url.host = base.host;
            url.port = base.port;
            url.path = base.path.slice();
            url.query = base.query;
            if (c === "?") {
              url.query = "";
              state = "query";
            } else if (c === "#") {
              url.fragment = "";
              state = "fragment";
            } else if (c !== undefined) {
              url.query = null;
              shortenPath(url);
              state = "path";
              p--;
            }
          }
          break;
        case "relative slash":
          if (special() && (c === "/" || c === "\\")) state = "special authority ignore slashes";
          else if (c === "/") state = "authority";
          else {
            url.username = base.username;
            url.password = base.password;
            url.host = base.host;
            url.port = base.port;
            state = "path";
            p--;
          }
          break;
        case "special authority slashes":
          if (c === "/" && cps[p + 1] === "/") {
            state = "special authority ignore slashes";
            p++;
          } else {
            state = "special authority ignore slashes";
            p--;
          }
          break;
        case "special authority ignore slashes":
          if (c !== "/" && c !== "\\") {
            state = "authority";
            p--;
          }
          break;
        case "authority":
          if (c === "@") {
            if (atSign) buffer = "%40" + buffer;
            atSign = true;
            for (const ch of buffer) {
              if (ch === ":" && !passwordToken) {
                passwordToken = true;
                continue;
              }
              const enc = percentEncode(ch, USERINFO, false);
              if (passwordToken) url.password += enc;
              else url.username += enc;
            }
            buffer = "";
          } else if (c === undefined || c === "/" || c === "?" || c === "#" || (special() && c === "\\")) {
            if (atSign && buffer === "") return null;
            p -= Array.from(buffer).length + 1;
            buffer = "";
            state = "host";
          } else buffer += c;
          break;
        case "host":
        case "hostname":
          if (override && url.scheme === "file") {
            p--;
            state = "file host";
          } else if (c === ":" && !insideBrackets) {
            if (buffer === "") return null;
            if (override === "hostname") return false;
            const host = parseHost(buffer, !special());
            if (host === null) return null;
            url.host = host;
            buffer = "";
            state = "port";
          } else if (c === undefined || c === "/" || c === "?" || c === "#" || (special() && c === "\\")) {
            p--;
            if (special() && buffer === "") return null;
            if (override && buffer === "" && (url.username || url.password || url.port !== null)) return false;
            const host = parseHost(buffer, !special());
            if (host === null) return null;
            url.host = host;
            buffer = "";
            state = "path start";
            if (override) return false;
          } else {
            if (c === "[") insideBrackets = true;
            if (c === "]") insideBrackets = false;
            buffer += c;
          }
          break;
        case "port":
          if (isDigit(c)) buffer += c;
          else if (c === undefined || c === "/" || c === "?" || c === "#" || (special() && c === "\\") || override) {
            if (buffer !== "") {
              const port = parseInt(buffer, 10);
              // A setter keeps what it changed before the port (the host setter's host).
              if (port > 65535) return override ? false : null;
              url.port = port === defaultPort(url.scheme) ? null : port;
              buffer = "";
            }
            if (override) return false;
            state = "path start";
            p--;
          } else return null;
          break;
        case "file":
          url.scheme = "file";
          url.host = "";
          if (c === "/" || c === "\\") state = "file slash";
          else if (base && base.scheme === "file") {
            url.host = base.host;
            url.path = base.path.slice();
            url.query = base.query;
            if (c === "?") {
              url.query = "";
              state = "query";
            } else if (c === "#") {
              url.fragment = "";
              state = "fragment";
            } else if (c !== undefined) {
              url.query = null;
              if (!startsWithDriveLetter(cps, p)) shortenPath(url);
              else url.path = [];
              state = "path";
              p--;
            }
          } else {
            state = "path";
            p--;
          }
          break;
        case "file slash":
          if (c === "/" || c === "\\") state = "file host";
          else {
            if (base && base.scheme === "file") {
              url.host = base.host;
              if (!startsWithDriveLetter(cps, p) && base.path.length && isWindowsDriveLetter(base.path[0], true)) {
                url.path.push(base.path[0]);
              }
            }
            state = "path";
            p--;
          }
          break;
        case "file host":
          if (c === undefined || c === "/" || c === "\\" || c === "?" || c === "#") {
            p--;
            if (!override && isWindowsDriveLetter(buffer, false)) state = "path";
            else if (buffer === "") {
              url.host = "";
              if (override) return false;
              state = "path start";
            } else {
              let host = parseHost(buffer, false);
              if (host === null) return null;
              if (host === "localhost") host = "";
              url.host = host;
              if (override) return false;
              buffer = "";
              state = "path start";
            }
          } else buffer += c;
          break;
        case "path start":
          if (special()) {
            state = "path";
            if (c !== "/" && c !== "\\") p--;
          } else if (!override && c === "?") {
            url.query = "";
            state = "query";
          } else if (!override && c === "#") {
            url.fragment = "";
            state = "fragment";
          } else if (c !== undefined) {
            state = "path";
            if (c !== "/") p--;
          } else if (override && url.host === null) url.path.push("");
          break;
        case "path":
          if (c === undefined || c === "/" || (special() && c === "\\") || (!override && (c === "?" || c === "#"))) {
            const slash = c === "/" || (special() && c === "\\");
            if (isDoubleDot(buffer)) {
              shortenPath(url);
              if (!slash) url.path.push("");
            } else if (isSingleDot(buffer) && !slash) url.path.push("");
            else if (!isSingleDot(buffer)) {
              if (url.scheme === "file" && url.path.length === 0 && isWindowsDriveLetter(buffer, false)) {
                buffer = buffer[0] + ":";
              }
              url.path.push(buffer);
            }
            buffer = "";
            if (c === "?") {
              url.query = "";
              state = "query";
            }
            if (c === "#") {
              url.fragment = "";
              state = "fragment";
            }
          } else buffer += percentEncode(c, PATH, false);
          break;
        case "opaque path":
          if (c === "?") {
            url.query = "";
            state = "query";
          } else if (c === "#") {
            url.fragment = "";
            state = "fragment";
          } else if (c !== undefined) url.path += percentEncode(c, C0, false);
          break;
        case "query":
          if ((!override && c === "#") || c === undefined) {
            url.query += percentEncode(buffer, special() ? SPECIAL_QUERY : QUERY, false);
            buffer = "";
            if (c === "#") {
              url.fragment = "";
              state = "fragment";
            }
          } else buffer += c;
          break;
        case "fragment":
          if (c !== undefined) url.fragment += percentEncode(c, FRAGMENT, false);
          break;
        default:
          throw new Error(`URL parser: unknown state ${state}`);
      }
    }
    return override ? true : url;
  }

  function serializePath(url) {
    if (url.opaque) return url.path;
    return url.path.map((s) => "/" + s).join("");
  }

  function serialize(url, excludeFragment) {
    let out = url.scheme + ":";
    if (url.host !== null) {
      out += "//";
      if (url.username || url.password) {
        out += url.username;
        if (url.password) out += ":" + url.password;
        out += "@";
      }
      out += url.host;
      if (url.port !== null) out += ":" + url.port;
    }
    if (url.host === null && !url.opaque && url.path.length > 1 && url.path[0] === "") out += "/.";
    out += serializePath(url);
    if (url.query !== null) out += "?" + url.query;
    if (!excludeFragment && url.fragment !== null) out += "#" + url.fragment;
    return out;
  }

  function origin(url) {
    if (url.scheme === "blob") {
      const inner = basicParse(serializePath(url), null);
      return inner && (inner.scheme === "http" || inner.scheme === "https") ? origin(inner) : "null";
    }
    if (["ftp", "http", "https", "ws", "wss"].includes(url.scheme)) {
      return `${url.scheme}://${url.host}${url.port !== null ? ":" + url.port : ""}`;
    }
    return "null";
  }

  // ---- application/x-www-form-urlencoded ----------------------------------------------

  function parseForm(input) {
    const out = [];
    for (const seq of input.split("&")) {
      if (seq === "") continue;
      const eq = seq.indexOf("=");
      const name = eq < 0 ? seq : seq.slice(0, eq);
      const value = eq < 0 ? "" : seq.slice(eq + 1);
      const dec = (s) => utf8Lossy(percentDecodeBytes(s.replace(/\+/g, " ")));
      out.push([dec(name), dec(value)]);
    }
    return out;
  }

  const toUSV = (s) => String(s).toWellFormed();
  const serializeForm = (list) =>
    list.map(([k, v]) => percentEncode(k, FORM, true) + "=" + percentEncode(v, FORM, true)).join("&");

  // ---- URLSearchParams ------------------------------------------------------------------

  class URLSearchParams {
    #list = [];
    #url = null; // the URL whose query this object mirrors
    constructor(init = "") {
      if (init instanceof URLSearchParams) this.#list = init.#list.map(([k, v]) => [k, v]);
      else if (typeof init === "object" && init !== null && typeof init[Symbol.iterator] === "function") {
        for (const pair of init) {
          const arr = Array.from(pair);
          if (arr.length !== 2) throw new TypeError("Each query pair must be an iterable [name, value] tuple");
          this.#list.push([toUSV(arr[0]), toUSV(arr[1])]);
        }
      } else if (typeof init === "object" && init !== null) {
        for (const key of Reflect.ownKeys(init)) {
          const desc = Reflect.getOwnPropertyDescriptor(init, key);
          if (typeof key === "string" && desc && desc.enumerable) this.#list.push([toUSV(key), toUSV(init[key])]);
        }
      } else {
        let s = toUSV(init);
        if (s.startsWith("?")) s = s.slice(1);
        this.#list = parseForm(s);
      }
    }
    #update() {
      if (!this.#url) return;
      const s = serializeForm(this.#list);
      web.urlSetQuery(this.#url, s === "" ? null : s);
    }
    get size() {
      return this.#list.length;
    }
    append(name, value) {
      this.#list.push([toUSV(name), toUSV(value)]);
      this.#update();
    }
    delete(name, value = undefined) {
      name = toUSV(name);
      if (value === undefined) this.#list = this.#list.filter(([k]) => k !== name);
      else {
        value = toUSV(value);
        this.#list = this.#list.filter(([k, v]) => k !== name || v !== value);
      }
      this.#update();
    }
    get(name) {
      name = toUSV(name);
      const hit = this.#list.find(([k]) => k === name);
      return hit ? hit[1] : null;
    }
    getAll(name) {
      name = toUSV(name);
      return this.#list.filter(([k]) => k === name).map(([, v]) => v);
    }
    has(name, value = undefined) {
      name = toUSV(name);
      if (value === undefined) return this.#list.some(([k]) => k === name);
      value = toUSV(value);
      return this.#list.some(([k, v]) => k === name && v === value);
    }
    set(name, value) {
      name = toUSV(name);
      value = toUSV(value);
      const at = this.#list.findIndex(([k]) => k === name);
      if (at < 0) this.#list.push([name, value]);
      else {
        this.#list[at][1] = value;
        this.#list = this.#list.filter(([k], i) => k !== name || i === at);
      }
      this.#update();
    }
    sort() {
      // Stable, by UTF-16 code units, as the standard says.
      this.#list = this.#list
        .map((pair, i) => [pair, i])
        .sort((a, b) => (a[0][0] < b[0][0] ? -1 : a[0][0] > b[0][0] ? 1 : a[1] - b[1]))
        .map(([pair]) => pair);
      this.#update();
    }
    forEach(fn, thisArg = undefined) {
      for (let i = 0; i < this.#list.length; i++) fn.call(thisArg, this.#list[i][1], this.#list[i][0], this);
    }
    *entries() {
      for (let i = 0; i < this.#list.length; i++) yield [this.#list[i][0], this.#list[i][1]];
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
    toString() {
      return serializeForm(this.#list);
    }
    get [Symbol.toStringTag]() {
      return "URLSearchParams";
    }
    static {
      // A URL's query is taken as it is: a leading "?" of it is data, not a prefix.
      web.paramsFor = (url, query) => {
        const params = new URLSearchParams();
        params.#list = parseForm(query || "");
        params.#url = url;
        return params;
      };
      web.paramsReset = (params, query) => {
        params.#list = parseForm(query || "");
      };
    }
  }

  // ---- URL ---------------------------------------------------------------------------------

  function parseOrThrow(input, base) {
    let baseRecord = null;
    if (base !== undefined) {
      baseRecord = basicParse(toUSV(base), null);
      if (!baseRecord) throw new TypeError(`Invalid base URL: ${base}`);
    }
    const record = basicParse(toUSV(input), baseRecord);
    if (!record) {
      const err = new TypeError(`Invalid URL: ${input}`);
      err.code = "ERR_INVALID_URL";
      throw err;
    }
    return record;
  }

  class URL {
    #r;
    #params;
    constructor(input, base = undefined) {
      if (arguments.length === 0) throw new TypeError("The \"url\" argument must be specified");
      this.#r = parseOrThrow(input, base);
      this.#params = web.paramsFor(this, this.#r.query);
    }
    static canParse(input, base = undefined) {
      try {
        parseOrThrow(input, base);
        return true;
      } catch (_) {
        return false;
      }
    }
    static parse(input, base = undefined) {
      try {
        return new URL(input, base);
      } catch (_) {
        return null;
      }
    }
    get href() {
      return serialize(this.#r, false);
    }
    set href(value) {
      this.#r = parseOrThrow(value);
      web.paramsReset(this.#params, this.#r.query);
    }
    get origin() {
      return origin(this.#r);
    }
    get protocol() {
      return this.#r.scheme + ":";
    }
    set protocol(value) {
      basicParse(toUSV(value) + ":", null, this.#r, "scheme start");
    }
    get username() {
      return this.#r.username;
    }
    set username(value) {
      if (this.#cannotHaveCredentials()) return;
      this.#r.username = percentEncode(toUSV(value), USERINFO, false);
    }
    get password() {
      return this.#r.password;
    }
    set password(value) {
      if (this.#cannotHaveCredentials()) return;
      this.#r.password = percentEncode(toUSV(value), USERINFO, false);
    }
    #cannotHaveCredentials() {
      return this.#r.host === null || this.#r.host === "" || this.#r.scheme === "file";
    }
    get host() {
      const r = this.#r;
      if (r.host === null) return "";
      return r.port === null ? r.host : `${r.host}:${r.port}`;
    }
    set host(value) {
      if (this.#r.opaque) return;
      this.#edit(toUSV(value), "host");
    }
    get hostname() {
      return this.#r.host === null ? "" : this.#r.host;
    }
    set hostname(value) {
      if (this.#r.opaque) return;
      this.#edit(toUSV(value), "hostname");
    }
    get port() {
      return this.#r.port === null ? "" : String(this.#r.port);
    }
    set port(value) {
      if (this.#cannotHaveCredentials()) return;
      value = toUSV(value);
      if (value === "") this.#r.port = null;
      else this.#edit(value, "port");
    }
    get pathname() {
      return serializePath(this.#r);
    }
    set pathname(value) {
      if (this.#r.opaque) return;
      this.#r.path = [];
      basicParse(toUSV(value), null, this.#r, "path start");
    }
    get search() {
      const q = this.#r.query;
      return q === null || q === "" ? "" : "?" + q;
    }
    set search(value) {
      value = toUSV(value);
      if (value === "") {
        this.#r.query = null;
        web.paramsReset(this.#params, "");
        return;
      }
      if (value.startsWith("?")) value = value.slice(1);
      this.#r.query = "";
      basicParse(value, null, this.#r, "query");
      web.paramsReset(this.#params, this.#r.query);
    }
    get searchParams() {
      return this.#params;
    }
    get hash() {
      const f = this.#r.fragment;
      return f === null || f === "" ? "" : "#" + f;
    }
    set hash(value) {
      value = toUSV(value);
      if (value === "") {
        this.#r.fragment = null;
        return;
      }
      if (value.startsWith("#")) value = value.slice(1);
      this.#r.fragment = "";
      basicParse(value, null, this.#r, "fragment");
    }
    // Setters work on a copy, so a failed edit leaves the URL as it was.
    #edit(value, state) {
      const copy = copyRecord(this.#r);
      const ok = basicParse(value, null, copy, state);
      if (ok !== null) this.#r = copy;
    }
    toString() {
      return this.href;
    }
    toJSON() {
      return this.href;
    }
    get [Symbol.toStringTag]() {
      return "URL";
    }
    static {
      web.urlSetQuery = (url, query) => {
        url.#r.query = query;
      };
    }
  }

  web.URL = URL;
  web.URLSearchParams = URLSearchParams;
  install("URL", URL);
  install("URLSearchParams", URLSearchParams);
});
