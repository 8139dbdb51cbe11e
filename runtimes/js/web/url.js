// URL after the WHATWG URL standard: its basic URL parser (a state machine
// over code points, with the state overrides the setters use), serializing
// and origins. Percent-encoding is urlencoding.js's, hosts are parsed by
// web.parseHost (urlhost.js), the query's URLSearchParams live in
// urlsearchparams.js.
(function (web) {
  const { install } = web;

  const SPECIAL = { "ftp:": 21, "file:": null, "http:": 80, "https:": 443, "ws:": 80, "wss:": 443 };
  const isSpecialScheme = (s) => Object.prototype.hasOwnProperty.call(SPECIAL, s + ":");
  const defaultPort = (s) => (isSpecialScheme(s) ? SPECIAL[s + ":"] : null);

  const { isAlpha, isDigit, isHex, C0, FRAGMENT, QUERY, SPECIAL_QUERY, PATH, USERINFO } = web.urlEncoding;
  const { percentEncode, toUSV } = web.urlEncoding;

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
            const host = web.parseHost(buffer, !special());
            if (host === null) return null;
            url.host = host;
            buffer = "";
            state = "port";
          } else if (c === undefined || c === "/" || c === "?" || c === "#" || (special() && c === "\\")) {
            p--;
            if (special() && buffer === "") return null;
            if (override && buffer === "" && (url.username || url.password || url.port !== null)) return false;
            const host = web.parseHost(buffer, !special());
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
              let host = web.parseHost(buffer, false);
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
  install("URL", URL);
});
