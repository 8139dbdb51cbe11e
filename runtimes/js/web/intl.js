// A small Intl for en-US, the locale every request resolves to (QuickJS-NG
// ships no Intl and no locale data). NumberFormat: decimal, percent and
// currency styles, grouping, integer/fraction/significant digits.
// DateTimeFormat: en-US patterns in UTC (the sandbox's only time zone),
// dateStyle/timeStyle and the common component options. Collator: an
// approximation of the root collation (punctuation < digits < letters, then
// accents, then lowercase first) with `numeric` and `sensitivity`.
// PluralRules and ListFormat for English. Number/Date/String's toLocale*
// methods and localeCompare go through these.
(function (web) {
  const { install } = web;

  const LOCALE = "en-US";
  const locale = (locales) => {
    const list = locales === undefined ? [] : Array.isArray(locales) ? locales : [locales];
    for (const l of list) if (typeof l !== "string") throw new TypeError("Incorrect locale information provided");
    return LOCALE;
  };
  const pick = (options, key, allowed, fallback) => {
    const v = options[key];
    if (v === undefined) return fallback;
    const s = String(v);
    if (allowed && !allowed.includes(s)) throw new RangeError(`Value ${s} out of range for Intl options property ${key}`);
    return s;
  };
  const digitsOption = (options, key, min, max, fallback) => {
    const v = options[key];
    if (v === undefined) return fallback;
    const n = Math.floor(Number(v));
    if (!(n >= min && n <= max)) throw new RangeError(`${key} value is out of range.`);
    return n;
  };

  // ---- numbers ------------------------------------------------------------------------

  // The decimal digits of |x| (its shortest round-trip form) and the exponent
  // of the first one: 1234.5 -> {digits: "12345", exp: 3}.
  function decimal(x) {
    const [mant, e] = Math.abs(x).toExponential().split("e");
    return { digits: mant.replace(".", ""), exp: Number(e) };
  }

  // Round half away from zero at `keep` digits from the start of `digits`.
  function roundDigits(d, keep) {
    let { digits, exp } = d;
    if (keep < 0) return { digits: "0", exp: exp, zero: true };
    if (digits.length <= keep) return { digits, exp };
    const up = digits.charCodeAt(keep) >= 53; // '5'
    digits = digits.slice(0, keep);
    if (up) {
      let i = digits.length - 1;
      const arr = digits.split("");
      while (i >= 0 && arr[i] === "9") arr[i--] = "0";
      if (i < 0) {
        // 9.99 -> 10.0: the carry becomes a new first digit
        arr.unshift("1");
        exp++;
      } else arr[i] = String(Number(arr[i]) + 1);
      digits = arr.join("");
    }
    if (digits === "" || /^0*$/.test(digits)) return { digits: "0", exp, zero: true };
    return { digits, exp };
  }

  // -> [integer digits, fraction digits] as strings
  // `scale` shifts the decimal point (percent: 2), exactly, as ICU does.
  function toFixedParts(x, scale, minFD, maxFD, minSD, maxSD) {
    if (x === 0) return ["0", "0".repeat(minSD !== undefined ? minSD - 1 : minFD)];
    let d = decimal(x);
    d.exp += scale;
    d = maxSD !== undefined ? roundDigits(d, maxSD) : roundDigits(d, d.exp + 1 + maxFD);
    if (d.zero) return ["0", "0".repeat(minSD !== undefined ? Math.max(0, minSD - 1) : minFD)];
    let { digits, exp } = d;
    let int;
    let frac;
    if (exp >= 0) {
      int = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
      frac = digits.slice(exp + 1);
    } else {
      int = "0";
      frac = "0".repeat(-exp - 1) + digits;
    }
    frac = frac.replace(/0+$/, "");
    if (minSD !== undefined) {
      const have = (int === "0" ? "" : int).length + (int === "0" ? frac.replace(/^0+/, "") : frac).length;
      if (have < minSD) frac = frac.padEnd(frac.length + minSD - have, "0");
    } else if (frac.length < minFD) frac = frac.padEnd(minFD, "0");
    return [int, frac];
  }

  const group = (int) => int.replace(/\B(?=(\d{3})+(?!\d))/g, ",");

  const CURRENCY = { USD: "$", EUR: "€", GBP: "£", JPY: "¥", INR: "₹", CNY: "CN¥", CAD: "CA$", AUD: "A$", KRW: "₩" };
  const ZERO_DIGIT_CURRENCIES = ["JPY", "KRW"];

  class NumberFormat {
    #o;
    constructor(locales = undefined, options = undefined) {
      locale(locales);
      options = Object(options === undefined ? {} : options);
      const style = pick(options, "style", ["decimal", "percent", "currency", "unit"], "decimal");
      if (style === "unit") throw new RangeError("Intl.NumberFormat: style 'unit' is not available in hugind");
      let currency;
      if (style === "currency") {
        if (options.currency === undefined) throw new TypeError("Currency code is required with currency style.");
        currency = String(options.currency).toUpperCase();
        if (!/^[A-Z]{3}$/.test(currency)) throw new RangeError(`Invalid currency code : ${options.currency}`);
      }
      const cd = style === "currency" ? (ZERO_DIGIT_CURRENCIES.includes(currency) ? 0 : 2) : 0;
      const defMax = style === "currency" ? cd : style === "percent" ? 0 : 3;
      const minFD = digitsOption(options, "minimumFractionDigits", 0, 100, undefined);
      const maxFD = digitsOption(options, "maximumFractionDigits", 0, 100, undefined);
      const o = {
        locale: LOCALE,
        numberingSystem: "latn",
        style,
        currency,
        currencyDisplay: style === "currency" ? pick(options, "currencyDisplay", ["symbol", "narrowSymbol", "code", "name"], "symbol") : undefined,
        minimumIntegerDigits: digitsOption(options, "minimumIntegerDigits", 1, 21, 1),
        minimumFractionDigits: minFD !== undefined ? minFD : Math.min(cd, maxFD !== undefined ? maxFD : cd),
        maximumFractionDigits: 0,
        useGrouping: options.useGrouping === undefined ? "auto" : options.useGrouping === false || options.useGrouping === "false" ? false : "auto",
        signDisplay: pick(options, "signDisplay", ["auto", "never", "always", "exceptZero", "negative"], "auto"),
      };
      o.maximumFractionDigits = maxFD !== undefined ? maxFD : Math.max(o.minimumFractionDigits, defMax);
      if (o.minimumFractionDigits > o.maximumFractionDigits) throw new RangeError("maximumFractionDigits value is out of range.");
      if (options.minimumSignificantDigits !== undefined || options.maximumSignificantDigits !== undefined) {
        o.minimumSignificantDigits = digitsOption(options, "minimumSignificantDigits", 1, 21, 1);
        o.maximumSignificantDigits = digitsOption(options, "maximumSignificantDigits", o.minimumSignificantDigits, 21, 21);
      }
      this.#o = o;
    }
    #format;
    // ECMA-402: format is a getter for a function bound to this formatter.
    get format() {
      return (this.#format ||= (value) => this.formatToParts(value).map((p) => p.value).join(""));
    }
    formatToParts(value) {
      const o = this.#o;
      const parts = [];
      let x = typeof value === "bigint" ? value : Number(value);
      const negative = typeof x === "bigint" ? x < 0n : x < 0 || Object.is(x, -0);
      if (typeof x === "bigint") x = negative ? -x : x;
      else x = Math.abs(x);
      let int;
      let frac = "";
      if (typeof x === "number" && Number.isNaN(x)) int = "NaN";
      else if (x === Infinity) int = "∞";
      else if (typeof x === "bigint") int = x.toString();
      else {
        [int, frac] = toFixedParts(x, o.style === "percent" ? 2 : 0, o.minimumFractionDigits, o.maximumFractionDigits, o.minimumSignificantDigits, o.maximumSignificantDigits);
        int = int.padStart(o.minimumIntegerDigits, "0");
      }
      const isZero = /^0*$/.test(int + frac);
      const finite = int !== "NaN" && int !== "∞";
      const sign = int === "NaN" && o.signDisplay !== "always" ? "" : o.signDisplay === "never" ? "" : negative && !(isZero && o.signDisplay === "exceptZero") ? (isZero && o.signDisplay === "negative" ? "" : "-") : o.signDisplay === "always" || (o.signDisplay === "exceptZero" && !isZero) ? "+" : "";
      if (sign) parts.push({ type: sign === "-" ? "minusSign" : "plusSign", value: sign });
      if (o.style === "currency") {
        const code = o.currency;
        const symbol = o.currencyDisplay === "code" ? code + "\u00a0" : CURRENCY[code] || code + "\u00a0";
        parts.push({ type: "currency", value: symbol.trimEnd() });
        if (symbol.endsWith("\u00a0") && finite) parts.push({ type: "literal", value: "\u00a0" });
      }
      if (int === "NaN") parts.push({ type: "nan", value: "NaN" });
      else if (int === "∞") parts.push({ type: "infinity", value: "∞" });
      else {
        const grouped = o.useGrouping ? group(int).split(",") : [int];
        grouped.forEach((g, i) => {
          if (i) parts.push({ type: "group", value: "," });
          parts.push({ type: "integer", value: g });
        });
        if (frac) {
          parts.push({ type: "decimal", value: "." });
          parts.push({ type: "fraction", value: frac });
        }
      }
      if (o.style === "percent") parts.push({ type: "percentSign", value: "%" });
      return parts;
    }
    resolvedOptions() {
      const out = {};
      for (const [k, v] of Object.entries(this.#o)) if (v !== undefined) out[k] = v;
      return out;
    }
    static supportedLocalesOf(locales) {
      return locales === undefined ? [] : [LOCALE];
    }
  }

  // ---- dates ---------------------------------------------------------------------------

  const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
  const DAYS = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];
  const UTC_ZONES = ["UTC", "ETC/UTC", "GMT", "ETC/GMT", "UCT", "ZULU", "UNIVERSAL", "ETC/UNIVERSAL"];
  const STYLES = ["full", "long", "medium", "short"];

  const two = (n) => String(n).padStart(2, "0");

  class DateTimeFormat {
    #o;
    constructor(locales = undefined, options = undefined) {
      locale(locales);
      options = Object(options === undefined ? {} : options);
      const tz = options.timeZone === undefined ? "UTC" : String(options.timeZone);
      if (!UTC_ZONES.includes(tz.toUpperCase())) {
        throw new RangeError(`Invalid time zone specified: ${tz} (hugind knows only UTC)`);
      }
      const o = { locale: LOCALE, calendar: "gregory", numberingSystem: "latn", timeZone: "UTC" };
      const dateStyle = pick(options, "dateStyle", STYLES, undefined);
      const timeStyle = pick(options, "timeStyle", STYLES, undefined);
      const fields = ["weekday", "era", "year", "month", "day", "hour", "minute", "second", "timeZoneName"];
      const given = fields.filter((f) => options[f] !== undefined);
      if ((dateStyle || timeStyle) && given.length) throw new TypeError("Can't set option " + given[0] + " when dateStyle or timeStyle is used");
      if (options.hour12 !== undefined) o.hour12 = Boolean(options.hour12);
      if (dateStyle || timeStyle) {
        if (dateStyle) o.dateStyle = dateStyle;
        if (timeStyle) o.timeStyle = timeStyle;
      } else {
        o.weekday = pick(options, "weekday", ["long", "short", "narrow"], undefined);
        o.year = pick(options, "year", ["numeric", "2-digit"], undefined);
        o.month = pick(options, "month", ["numeric", "2-digit", "long", "short", "narrow"], undefined);
        o.day = pick(options, "day", ["numeric", "2-digit"], undefined);
        o.hour = pick(options, "hour", ["numeric", "2-digit"], undefined);
        o.minute = pick(options, "minute", ["numeric", "2-digit"], undefined);
        o.second = pick(options, "second", ["numeric", "2-digit"], undefined);
        o.timeZoneName = pick(options, "timeZoneName", ["short", "long", "shortOffset", "longOffset"], undefined);
        if (!given.length) {
          const defaults = options.__defaults || "date";
          if (defaults !== "time") Object.assign(o, { year: "numeric", month: "numeric", day: "numeric" });
          if (defaults !== "date") Object.assign(o, { hour: "numeric", minute: "numeric", second: "numeric" });
        }
      }
      this.#o = o;
    }
    #format;
    // ECMA-402: format is a getter for a function bound to this formatter.
    get format() {
      return (this.#format ||= (date) => {
        const t = date === undefined ? Date.now() : Number(date instanceof Date ? date.getTime() : date);
        if (!Number.isFinite(t)) throw new RangeError("Invalid time value");
        return render(this.#o, new Date(t));
      });
    }
    formatToParts(date) {
      return [{ type: "literal", value: this.format(date) }];
    }
    resolvedOptions() {
      const out = {};
      for (const [k, v] of Object.entries(this.#o)) if (v !== undefined) out[k] = v;
      return out;
    }
    static supportedLocalesOf(locales) {
      return locales === undefined ? [] : [LOCALE];
    }
  }

  function renderDate(o, d) {
    const y = d.getUTCFullYear();
    const year = o.year === "2-digit" ? two(y % 100) : o.year ? String(y) : "";
    const m = d.getUTCMonth();
    const day = o.day === "2-digit" ? two(d.getUTCDate()) : o.day ? String(d.getUTCDate()) : "";
    const wd = o.weekday ? (o.weekday === "long" ? DAYS[d.getUTCDay()] : o.weekday === "short" ? DAYS[d.getUTCDay()].slice(0, 3) : DAYS[d.getUTCDay()][0]) : "";
    let text;
    if (o.month === "long" || o.month === "short" || o.month === "narrow") {
      const name = o.month === "long" ? MONTHS[m] : o.month === "short" ? MONTHS[m].slice(0, 3) : MONTHS[m][0];
      text = day ? `${name} ${day}` : name;
      if (year) text += day ? `, ${year}` : ` ${year}`;
    } else {
      const month = o.month === "2-digit" ? two(m + 1) : o.month ? String(m + 1) : "";
      text = [month, day, year].filter(Boolean).join("/");
    }
    return [wd, text].filter(Boolean).join(", ");
  }

  function renderTime(o, d) {
    const h24 = d.getUTCHours();
    const h12 = o.hour12 !== false;
    let hour = "";
    if (o.hour) {
      const h = h12 ? h24 % 12 || 12 : h24;
      hour = o.hour === "2-digit" || (!h12 && o.minute) ? two(h) : String(h);
    }
    const parts = [hour, o.minute ? (o.hour ? two(d.getUTCMinutes()) : String(d.getUTCMinutes())) : "", o.second ? (o.minute ? two(d.getUTCSeconds()) : String(d.getUTCSeconds())) : ""].filter(Boolean);
    let text = parts.join(":");
    if (o.hour && h12) text += ` ${h24 < 12 ? "AM" : "PM"}`;
    if (o.timeZoneName) text += o.timeZoneName === "long" ? " Coordinated Universal Time" : " UTC";
    return text;
  }

  function render(o, d) {
    if (o.dateStyle || o.timeStyle) {
      const dateOpts = {
        full: { weekday: "long", month: "long", day: "numeric", year: "numeric" },
        long: { month: "long", day: "numeric", year: "numeric" },
        medium: { month: "short", day: "numeric", year: "numeric" },
        short: { month: "numeric", day: "numeric", year: "2-digit" },
      }[o.dateStyle];
      const timeOpts = {
        full: { hour: "numeric", minute: "2-digit", second: "2-digit", timeZoneName: "long" },
        long: { hour: "numeric", minute: "2-digit", second: "2-digit", timeZoneName: "short" },
        medium: { hour: "numeric", minute: "2-digit", second: "2-digit" },
        short: { hour: "numeric", minute: "2-digit" },
      }[o.timeStyle];
      const date = dateOpts ? renderDate(dateOpts, d) : "";
      const time = timeOpts ? renderTime({ ...timeOpts, hour12: o.hour12 }, d) : "";
      if (!date || !time) return date || time;
      return o.dateStyle === "full" || o.dateStyle === "long" ? `${date} at ${time}` : `${date}, ${time}`;
    }
    const date = renderDate(o, d);
    const time = renderTime(o, d);
    if (!date || !time) return date || time;
    const textual = o.month === "long" || o.month === "short" || o.month === "narrow";
    return textual && o.year ? `${date} at ${time}` : `${date}, ${time}`;
  }

  // ---- collation ---------------------------------------------------------------------------

  // ASCII punctuation and symbols in the root collation's order.
  const PUNCTUATION = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

  // Per character: [primary, secondary (accents), tertiary (case)].
  function weights(ch) {
    const base = ch.normalize("NFD");
    const letter = base[0];
    const accents = base.slice(1);
    const lower = letter.toLowerCase();
    let cls;
    let primary = lower;
    if (/\s/.test(letter)) cls = 0;
    else if (/[0-9]/.test(letter)) cls = 2;
    else if (lower !== letter.toUpperCase() || /\p{L}/u.test(letter)) cls = 3;
    else {
      cls = 1;
      const at = PUNCTUATION.indexOf(letter);
      primary = at >= 0 ? String.fromCharCode(at) : letter;
    }
    return { cls, primary, accents, upper: letter !== lower };
  }

  class Collator {
    #o;
    constructor(locales = undefined, options = undefined) {
      locale(locales);
      options = Object(options === undefined ? {} : options);
      this.#o = {
        locale: LOCALE,
        usage: pick(options, "usage", ["sort", "search"], "sort"),
        sensitivity: pick(options, "sensitivity", ["base", "accent", "case", "variant"], "variant"),
        ignorePunctuation: Boolean(options.ignorePunctuation),
        collation: "default",
        numeric: Boolean(options.numeric),
        caseFirst: pick(options, "caseFirst", ["upper", "lower", "false"], "false"),
      };
    }
    #bound;
    // ECMA-402: compare is a getter for a function bound to this collator.
    get compare() {
      return (this.#bound ||= (a, b) => this.#compare(a, b));
    }
    #compare(a, b) {
      const o = this.#o;
      const units = (s) => {
        const out = [];
        const re = o.numeric ? /\d+|[\s\S]/gu : /[\s\S]/gu;
        for (const m of String(s).normalize("NFC").matchAll(re)) {
          if (o.ignorePunctuation && /^[\s\p{P}]$/u.test(m[0])) continue;
          out.push(o.numeric && /^\d+$/.test(m[0]) ? { cls: 2, num: BigInt(m[0]), accents: "", upper: false } : weights(m[0]));
        }
        return out;
      };
      const x = units(a);
      const y = units(b);
      const cmp = (p, q) => (p < q ? -1 : p > q ? 1 : 0);
      // Levels in turn: letters, then accents, then case.
      for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = cmp(x[i].cls, y[i].cls) || ("num" in x[i] && "num" in y[i] ? cmp(x[i].num, y[i].num) : cmp(x[i].primary, y[i].primary));
        if (c) return c;
      }
      if (x.length !== y.length) return x.length < y.length ? -1 : 1;
      if (o.sensitivity === "base" || o.sensitivity === "case") {
        if (o.sensitivity === "case") for (let i = 0; i < x.length; i++) if (x[i].upper !== y[i].upper) return x[i].upper ? 1 : -1;
        return 0;
      }
      for (let i = 0; i < x.length; i++) {
        const c = cmp(x[i].accents, y[i].accents);
        if (c) return c;
      }
      if (o.sensitivity === "accent") return 0;
      const upperFirst = o.caseFirst === "upper";
      for (let i = 0; i < x.length; i++) {
        if (x[i].upper !== y[i].upper) return x[i].upper !== upperFirst ? 1 : -1;
      }
      return 0;
    }
    resolvedOptions() {
      return { ...this.#o };
    }
    static supportedLocalesOf(locales) {
      return locales === undefined ? [] : [LOCALE];
    }
  }

  // ---- plurals and lists ------------------------------------------------------------------

  class PluralRules {
    #type;
    constructor(locales = undefined, options = undefined) {
      locale(locales);
      this.#type = pick(Object(options === undefined ? {} : options), "type", ["cardinal", "ordinal"], "cardinal");
    }
    select(n) {
      n = Number(n);
      if (this.#type === "cardinal") return n === 1 ? "one" : "other";
      if (!Number.isInteger(n)) return "other";
      const ten = Math.abs(n) % 10;
      const hundred = Math.abs(n) % 100;
      if (ten === 1 && hundred !== 11) return "one";
      if (ten === 2 && hundred !== 12) return "two";
      if (ten === 3 && hundred !== 13) return "few";
      return "other";
    }
    resolvedOptions() {
      return { locale: LOCALE, type: this.#type };
    }
  }

  class ListFormat {
    #o;
    constructor(locales = undefined, options = undefined) {
      locale(locales);
      options = Object(options === undefined ? {} : options);
      this.#o = {
        type: pick(options, "type", ["conjunction", "disjunction", "unit"], "conjunction"),
        style: pick(options, "style", ["long", "short", "narrow"], "long"),
      };
    }
    format(list) {
      const items = Array.from(list, String);
      const word = this.#o.type === "disjunction" ? "or" : this.#o.style === "long" ? "and" : "&";
      if (this.#o.type === "unit") return items.join(this.#o.style === "narrow" ? " " : ", ");
      if (items.length < 2) return items.join("");
      if (items.length === 2) return `${items[0]} ${word} ${items[1]}`;
      return `${items.slice(0, -1).join(", ")}, ${word} ${items[items.length - 1]}`;
    }
  }

  // A namespace object shaped like ECMAScript's: its properties are writable,
  // configurable and not enumerable.
  const Intl = {};
  const members = {
    NumberFormat,
    DateTimeFormat,
    Collator,
    PluralRules,
    ListFormat,
    getCanonicalLocales(locales) {
      return locales === undefined ? [] : [LOCALE];
    },
    supportedValuesOf(key) {
      return [];
    },
  };
  for (const [name, value] of Object.entries(members)) {
    Object.defineProperty(Intl, name, { value, writable: true, enumerable: false, configurable: true });
  }
  Object.defineProperty(Intl, Symbol.toStringTag, { value: "Intl", configurable: true });
  install("Intl", Intl);

  // The built-ins' locale methods, defined as ECMA-402 defines them, and shaped
  // like built-ins: methods (not constructors, no prototype), their own names,
  // ECMA-402's lengths (a parameter with a default does not count), and
  // writable, configurable, non-enumerable.
  const install402 = (proto, methods) => {
    for (const [name, fn] of Object.entries(methods)) {
      Object.defineProperty(proto, name, { value: fn, writable: true, enumerable: false, configurable: true });
    }
  };
  install402(Number.prototype, {
    toLocaleString(locales = undefined, options = undefined) {
      return new NumberFormat(locales, options).format(Number.prototype.valueOf.call(this));
    },
  });
  install402(BigInt.prototype, {
    toLocaleString(locales = undefined, options = undefined) {
      return new NumberFormat(locales, options).format(BigInt.prototype.valueOf.call(this));
    },
  });
  const dateMethod = (name, defaults) => ({
    [name](locales = undefined, options = undefined) {
      const t = Date.prototype.getTime.call(this);
      if (Number.isNaN(t)) return "Invalid Date";
      const o = Object(options === undefined ? {} : options);
      return new DateTimeFormat(locales, { ...o, __defaults: defaults }).format(t);
    },
  });
  install402(Date.prototype, {
    ...dateMethod("toLocaleString", "all"),
    ...dateMethod("toLocaleDateString", "date"),
    ...dateMethod("toLocaleTimeString", "time"),
  });
  let defaultCollator = null; // sorts call localeCompare a lot, mostly without options
  install402(String.prototype, {
    localeCompare(that, locales = undefined, options = undefined) {
      if (this === null || this === undefined) throw new TypeError("String.prototype.localeCompare called on null or undefined");
      const plain = locales === undefined && options === undefined;
      const collator = plain ? (defaultCollator ||= new Collator()) : new Collator(locales, options);
      return collator.compare(String(this), String(that));
    },
  });
});
