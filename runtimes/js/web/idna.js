// The URL standard's "domain to ASCII": UTS #46 processing with the options
// WHATWG URL gives it (CheckHyphens=false, CheckBidi=true, CheckJoiners=true,
// UseSTD3ASCIIRules=false, Transitional=false, VerifyDnsLength=false), then
// Punycode. Sets web.domainToASCII(domain) -> ASCII domain, or null on failure.
//
// The UTS #46 mapping is computed, not tabled: each code point is NFKC-normalized
// and lowercased (one code point at a time, so no final-sigma rule), which
// matches the IDNA mapping table except for the code points in MAP_FIX.
// Disallowed code points are the unassigned, control, format, private-use,
// surrogate, separator and noncharacter ones, and MORE_DISALLOWED. Bidi
// classes come from the general category, corrected by L_NOT_BY_CATEGORY and
// NEUTRAL_NOT_BY_CATEGORY. The tables below were derived from the Unicode
// Character Database (IdnaMappingTable, ArabicShaping and UnicodeData: the
// idna package's and Python's unicodedata copies of them) and are printed by
// idna_tables.py beside this file (idna 3.20, Unicode 14 for the Bidi classes).
(function (web) {
  const MAP_FIX = {"345":"\u03b9","37a":" \u03b9","3f2":"\u03c3","1c80":"\u0432","1c81":"\u0434","1c82":"\u043e","1c83":"\u0441","1c84":"\u0442","1c85":"\u0442","1c86":"\u044a","1c87":"\u0463","1c88":"\ua64b","1f80":"\u1f00\u03b9","1f81":"\u1f01\u03b9","1f82":"\u1f02\u03b9","1f83":"\u1f03\u03b9","1f84":"\u1f04\u03b9","1f85":"\u1f05\u03b9","1f86":"\u1f06\u03b9","1f87":"\u1f07\u03b9","1f88":"\u1f00\u03b9","1f89":"\u1f01\u03b9","1f8a":"\u1f02\u03b9","1f8b":"\u1f03\u03b9","1f8c":"\u1f04\u03b9","1f8d":"\u1f05\u03b9","1f8e":"\u1f06\u03b9","1f8f":"\u1f07\u03b9","1f90":"\u1f20\u03b9","1f91":"\u1f21\u03b9","1f92":"\u1f22\u03b9","1f93":"\u1f23\u03b9","1f94":"\u1f24\u03b9","1f95":"\u1f25\u03b9","1f96":"\u1f26\u03b9","1f97":"\u1f27\u03b9","1f98":"\u1f20\u03b9","1f99":"\u1f21\u03b9","1f9a":"\u1f22\u03b9","1f9b":"\u1f23\u03b9","1f9c":"\u1f24\u03b9","1f9d":"\u1f25\u03b9","1f9e":"\u1f26\u03b9","1f9f":"\u1f27\u03b9","1fa0":"\u1f60\u03b9","1fa1":"\u1f61\u03b9","1fa2":"\u1f62\u03b9","1fa3":"\u1f63\u03b9","1fa4":"\u1f64\u03b9","1fa5":"\u1f65\u03b9","1fa6":"\u1f66\u03b9","1fa7":"\u1f67\u03b9","1fa8":"\u1f60\u03b9","1fa9":"\u1f61\u03b9","1faa":"\u1f62\u03b9","1fab":"\u1f63\u03b9","1fac":"\u1f64\u03b9","1fad":"\u1f65\u03b9","1fae":"\u1f66\u03b9","1faf":"\u1f67\u03b9","1fb2":"\u1f70\u03b9","1fb3":"\u03b1\u03b9","1fb4":"\u03ac\u03b9","1fb7":"\u1fb6\u03b9","1fbc":"\u03b1\u03b9","1fc2":"\u1f74\u03b9","1fc3":"\u03b7\u03b9","1fc4":"\u03ae\u03b9","1fc7":"\u1fc6\u03b9","1fcc":"\u03b7\u03b9","1ff2":"\u1f7c\u03b9","1ff3":"\u03c9\u03b9","1ff4":"\u03ce\u03b9","1ff7":"\u1ff6\u03b9","1ffc":"\u03c9\u03b9","3002":".","ff61":".","1d6d3":"\u03c3","1d70d":"\u03c3","1d747":"\u03c3","1d781":"\u03c3","1d7bb":"\u03c3"};
  const MORE_DISALLOWED = /[\u{1680}\u{2024}-\u{2026}\u{2488}-\u{249b}\u{2ff0}-\u{2ffb}\u{33c2}\u{33c7}\u{33d8}\u{fe12}\u{fe19}\u{fe30}\u{fe52}\u{fffc}-\u{fffd}\u{1f100}]/u;
  const RAL = /[\u{5be}\u{5c0}\u{5c3}\u{5c6}\u{5d0}-\u{5ea}\u{5ef}-\u{5f4}\u{608}\u{60b}\u{60d}\u{61b}\u{61d}-\u{64a}\u{66d}-\u{66f}\u{671}-\u{674}\u{679}-\u{6d5}\u{6e5}-\u{6e6}\u{6ee}-\u{6ef}\u{6fa}-\u{70d}\u{710}\u{712}-\u{72f}\u{74d}-\u{7a5}\u{7b1}\u{7c0}-\u{7ea}\u{7f4}-\u{7f5}\u{7fa}\u{7fe}-\u{815}\u{81a}\u{824}\u{828}\u{830}-\u{83e}\u{840}-\u{858}\u{85e}\u{860}-\u{86a}\u{870}-\u{88e}\u{8a0}-\u{8c9}\u{fbb2}-\u{fbc2}\u{fe73}\u{10800}-\u{10805}\u{10808}\u{1080a}-\u{10835}\u{10837}-\u{10838}\u{1083c}\u{1083f}-\u{10855}\u{10857}-\u{1089e}\u{108a7}-\u{108af}\u{108e0}-\u{108f2}\u{108f4}-\u{108f5}\u{108fb}-\u{1091b}\u{10920}-\u{10939}\u{1093f}\u{10980}-\u{109b7}\u{109bc}-\u{109cf}\u{109d2}-\u{10a00}\u{10a10}-\u{10a13}\u{10a15}-\u{10a17}\u{10a19}-\u{10a35}\u{10a40}-\u{10a48}\u{10a50}-\u{10a58}\u{10a60}-\u{10a9f}\u{10ac0}-\u{10ae4}\u{10aeb}-\u{10af6}\u{10b00}-\u{10b35}\u{10b40}-\u{10b55}\u{10b58}-\u{10b72}\u{10b78}-\u{10b91}\u{10b99}-\u{10b9c}\u{10ba9}-\u{10baf}\u{10c00}-\u{10c48}\u{10cc0}-\u{10cf2}\u{10cfa}-\u{10d23}\u{10e80}-\u{10ea9}\u{10ead}\u{10eb0}-\u{10eb1}\u{10f00}-\u{10f27}\u{10f30}-\u{10f45}\u{10f51}-\u{10f59}\u{10f70}-\u{10f81}\u{10f86}-\u{10f89}\u{10fb0}-\u{10fcb}\u{10fe0}-\u{10ff6}\u{1e800}-\u{1e8c4}\u{1e8c7}-\u{1e8cf}\u{1e922}-\u{1e943}\u{1e94b}\u{1e950}-\u{1e959}\u{1e95e}-\u{1e95f}\u{1ec71}-\u{1ecb4}\u{1ed01}-\u{1ed3d}]/u;
  const AN = /[\u{660}-\u{669}\u{66b}-\u{66c}\u{10d30}-\u{10d39}\u{10e60}-\u{10e7e}]/u;
  const EN = /[\u{30}-\u{39}\u{6f0}-\u{6f9}\u{102e1}-\u{102fb}]/u;
  const L_NOT_BY_CATEGORY = /[\u{482}\u{55a}-\u{55f}\u{589}\u{964}-\u{965}\u{970}\u{9fa}\u{9fd}\u{a76}\u{af0}\u{b70}\u{c77}\u{c7f}\u{c84}\u{cbf}\u{cc6}\u{d4f}\u{d79}\u{df4}\u{e4f}\u{e5a}-\u{e5b}\u{f01}-\u{f0b}\u{f0d}-\u{f17}\u{f1a}-\u{f1f}\u{f34}\u{f36}\u{f38}\u{f85}\u{fbe}-\u{fc5}\u{fc7}-\u{fcc}\u{fce}-\u{fda}\u{104a}-\u{104f}\u{109e}-\u{109f}\u{10fb}\u{1360}-\u{1368}\u{166d}-\u{166e}\u{16eb}-\u{16ed}\u{1735}-\u{1736}\u{17d4}-\u{17d6}\u{17d8}-\u{17da}\u{1a1e}-\u{1a1f}\u{1aa0}-\u{1aa6}\u{1aa8}-\u{1aad}\u{1b5a}-\u{1b6a}\u{1b74}-\u{1b7e}\u{1bfc}-\u{1bff}\u{1c3b}-\u{1c3f}\u{1c7e}-\u{1c7f}\u{1cc0}-\u{1cc7}\u{1cd3}\u{214f}\u{2336}-\u{237a}\u{2395}\u{26ac}\u{2800}-\u{28ff}\u{2d70}\u{3190}-\u{3191}\u{327f}\u{a4fe}-\u{a4ff}\u{a6f2}-\u{a6f7}\u{a789}-\u{a78a}\u{a836}-\u{a837}\u{a8ce}-\u{a8cf}\u{a8f8}-\u{a8fa}\u{a8fc}\u{a92e}-\u{a92f}\u{a95f}\u{a9c1}-\u{a9cd}\u{a9de}-\u{a9df}\u{aa5c}-\u{aa5f}\u{aa77}-\u{aa79}\u{aade}-\u{aadf}\u{aaf0}-\u{aaf1}\u{ab5b}\u{abeb}\u{10100}\u{10102}\u{10137}-\u{1013f}\u{1018d}-\u{1018e}\u{101d0}-\u{101fc}\u{1039f}\u{103d0}\u{1056f}\u{11047}-\u{1104d}\u{110bb}-\u{110bc}\u{110be}-\u{110c1}\u{11140}-\u{11143}\u{11174}-\u{11175}\u{111c5}-\u{111c8}\u{111cd}\u{111db}\u{111dd}-\u{111df}\u{11238}-\u{1123d}\u{112a9}\u{1144b}-\u{1144f}\u{1145a}-\u{1145b}\u{1145d}\u{114c6}\u{115c1}-\u{115d7}\u{11641}-\u{11643}\u{116b9}\u{1173c}-\u{1173f}\u{1183b}\u{11944}-\u{11946}\u{119e2}\u{11a07}-\u{11a08}\u{11a3f}-\u{11a46}\u{11a9a}-\u{11a9c}\u{11a9e}-\u{11aa2}\u{11c3f}\u{11c41}-\u{11c45}\u{11c70}-\u{11c71}\u{11ef7}-\u{11ef8}\u{11fff}\u{12470}-\u{12474}\u{12ff1}-\u{12ff2}\u{16a6e}-\u{16a6f}\u{16af5}\u{16b37}-\u{16b3f}\u{16b44}-\u{16b45}\u{16e97}-\u{16e9a}\u{1bc9c}\u{1bc9f}\u{1cf50}-\u{1cfc3}\u{1d000}-\u{1d0f5}\u{1d100}-\u{1d126}\u{1d129}-\u{1d15d}\u{1d16a}-\u{1d16c}\u{1d183}-\u{1d184}\u{1d18c}-\u{1d1a9}\u{1d1ae}-\u{1d1ba}\u{1d1c1}-\u{1d1e8}\u{1d800}-\u{1d9ff}\u{1da37}-\u{1da3a}\u{1da6d}-\u{1da74}\u{1da76}-\u{1da83}\u{1da85}-\u{1da8b}\u{1e14f}\u{1f150}-\u{1f169}\u{1f170}-\u{1f18f}\u{1f191}-\u{1f1ac}\u{1f1e6}-\u{1f1ff}]/u;
  const NEUTRAL_NOT_BY_CATEGORY = /[\u{2b9}-\u{2ba}\u{2c6}-\u{2cf}\u{2ec}\u{c78}-\u{c7e}\u{17f0}-\u{17f9}\u{24eb}-\u{24ff}\u{2776}-\u{2793}\u{2cfd}\u{2e2f}\u{a67f}\u{a717}-\u{a71f}\u{a788}\u{10140}-\u{10178}\u{1018a}-\u{1018b}\u{11052}-\u{11065}\u{1f10b}-\u{1f10c}]/u;
  const JOIN_LD = /[\u{620}\u{626}\u{628}\u{62a}-\u{62e}\u{633}-\u{63f}\u{641}-\u{647}\u{649}-\u{64a}\u{66e}-\u{66f}\u{678}-\u{687}\u{69a}-\u{6bf}\u{6c1}-\u{6c2}\u{6cc}\u{6ce}\u{6d0}-\u{6d1}\u{6fa}-\u{6fc}\u{6ff}\u{712}-\u{714}\u{71a}-\u{71d}\u{71f}-\u{727}\u{729}\u{72b}\u{72d}-\u{72e}\u{74e}-\u{758}\u{75c}-\u{76a}\u{76d}-\u{770}\u{772}\u{775}-\u{777}\u{77a}-\u{77f}\u{7ca}-\u{7ea}\u{841}-\u{845}\u{848}\u{84a}-\u{853}\u{855}\u{860}\u{862}-\u{865}\u{868}\u{886}\u{889}-\u{88d}\u{88f}\u{8a0}-\u{8a9}\u{8af}-\u{8b0}\u{8b3}-\u{8b8}\u{8ba}-\u{8c8}\u{1807}\u{1820}-\u{1878}\u{1887}-\u{18a8}\u{18aa}\u{a840}-\u{a872}\u{10ac0}-\u{10ac4}\u{10acd}\u{10ad3}-\u{10adc}\u{10ade}-\u{10ae0}\u{10aeb}-\u{10aee}\u{10b80}\u{10b82}\u{10b86}-\u{10b88}\u{10b8a}-\u{10b8b}\u{10b8d}\u{10b90}\u{10bad}-\u{10bae}\u{10d00}-\u{10d21}\u{10d23}\u{10ec3}-\u{10ec4}\u{10ec6}-\u{10ec7}\u{10ed9}-\u{10eee}\u{10f30}-\u{10f32}\u{10f34}-\u{10f44}\u{10f51}-\u{10f53}\u{10f70}-\u{10f73}\u{10f76}-\u{10f81}\u{10fb0}\u{10fb2}-\u{10fb3}\u{10fb8}\u{10fbb}-\u{10fbc}\u{10fbe}-\u{10fbf}\u{10fc1}\u{10fc4}\u{10fca}-\u{10fcb}\u{1e900}-\u{1e943}]/u;
  const JOIN_RD = /[\u{620}\u{622}-\u{63f}\u{641}-\u{64a}\u{66e}-\u{66f}\u{671}-\u{673}\u{675}-\u{6d3}\u{6d5}\u{6ee}-\u{6ef}\u{6fa}-\u{6fc}\u{6ff}\u{710}\u{712}-\u{72f}\u{74d}-\u{77f}\u{7ca}-\u{7ea}\u{840}-\u{858}\u{860}\u{862}-\u{865}\u{867}-\u{86a}\u{870}-\u{882}\u{886}\u{889}-\u{88f}\u{8a0}-\u{8ac}\u{8ae}-\u{8c8}\u{1807}\u{1820}-\u{1878}\u{1887}-\u{18a8}\u{18aa}\u{a840}-\u{a871}\u{10ac0}-\u{10ac5}\u{10ac7}\u{10ac9}-\u{10aca}\u{10ace}-\u{10ad6}\u{10ad8}-\u{10ae1}\u{10ae4}\u{10aeb}-\u{10aef}\u{10b80}-\u{10b91}\u{10ba9}-\u{10bae}\u{10d01}-\u{10d23}\u{10ec2}-\u{10ec4}\u{10ec6}-\u{10ec7}\u{10f30}-\u{10f44}\u{10f51}-\u{10f54}\u{10f70}-\u{10f81}\u{10fb0}\u{10fb2}-\u{10fb6}\u{10fb8}-\u{10fbf}\u{10fc1}-\u{10fc4}\u{10fc9}-\u{10fca}\u{1e900}-\u{1e943}]/u;
  const VIRAMA = /[\u{94d}\u{9cd}\u{a4d}\u{acd}\u{b4d}\u{bcd}\u{c4d}\u{ccd}\u{d3b}-\u{d3c}\u{d4d}\u{dca}\u{e3a}\u{eba}\u{f84}\u{1039}-\u{103a}\u{1714}-\u{1715}\u{1734}\u{17d2}\u{1a60}\u{1b44}\u{1baa}-\u{1bab}\u{1bf2}-\u{1bf3}\u{2d7f}\u{a806}\u{a82c}\u{a8c4}\u{a953}\u{a9c0}\u{aaf6}\u{abed}\u{10a3f}\u{11046}\u{11070}\u{1107f}\u{110b9}\u{11133}-\u{11134}\u{111c0}\u{11235}\u{112ea}\u{1134d}\u{11442}\u{114c2}\u{115bf}\u{1163f}\u{116b6}\u{1172b}\u{11839}\u{1193d}-\u{1193e}\u{119e0}\u{11a34}\u{11a47}\u{11a99}\u{11c3f}\u{11d44}-\u{11d45}\u{11d97}]/u;

  // Punycode (RFC 3492) for one label.
  function punycode(label) {
    const cps = Array.from(label, (ch) => ch.codePointAt(0));
    let out = cps.filter((cp) => cp < 0x80).map((cp) => String.fromCharCode(cp)).join("");
    const basic = out.length;
    let handled = basic;
    if (basic) out += "-";
    let n = 128;
    let delta = 0;
    let bias = 72;
    const digit = (d) => String.fromCharCode(d < 26 ? d + 97 : d + 22);
    const adapt = (d, count, first) => {
      d = first ? Math.floor(d / 700) : d >> 1;
      d += Math.floor(d / count);
      let k = 0;
      while (d > 455) {
        d = Math.floor(d / 35);
        k += 36;
      }
      return k + Math.floor((36 * d) / (d + 38));
    };
    while (handled < cps.length) {
      const m = Math.min(...cps.filter((cp) => cp >= n));
      delta += (m - n) * (handled + 1);
      n = m;
      for (const cp of cps) {
        if (cp < n) delta++;
        if (cp === n) {
          let q = delta;
          for (let k = 36; ; k += 36) {
            const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
            if (q < t) break;
            out += digit(t + ((q - t) % (36 - t)));
            q = Math.floor((q - t) / (36 - t));
          }
          out += digit(q);
          bias = adapt(delta, handled + 1, handled === basic);
          delta = 0;
          handled++;
        }
      }
      delta++;
      n++;
    }
    return out;
  }

  // Punycode decoding of one label's tail (after "xn--"): the string, or null
  // when it is not valid Punycode.
  function punydecode(input) {
    const out = [];
    const at = input.lastIndexOf("-");
    for (const ch of at > 0 ? input.slice(0, at) : "") {
      if (ch.charCodeAt(0) >= 0x80) return null;
      out.push(ch.charCodeAt(0));
    }
    let n = 128;
    let i = 0;
    let bias = 72;
    let p = at > 0 ? at + 1 : 0;
    const value = (c) => (c >= 48 && c <= 57 ? c - 22 : c >= 65 && c <= 90 ? c - 65 : c >= 97 && c <= 122 ? c - 97 : 36);
    while (p < input.length) {
      const old = i;
      let w = 1;
      for (let k = 36; ; k += 36) {
        if (p >= input.length) return null;
        const digit = value(input.charCodeAt(p++));
        if (digit >= 36) return null;
        i += digit * w;
        const t = k <= bias ? 1 : k >= bias + 26 ? 26 : k - bias;
        if (digit < t) break;
        w *= 36 - t;
        if (i > 0x10ffff * 64) return null;
      }
      const len = out.length + 1;
      let delta = old === 0 ? Math.floor((i - old) / 700) : (i - old) >> 1;
      delta += Math.floor(delta / len);
      let k = 0;
      while (delta > 455) {
        delta = Math.floor(delta / 35);
        k += 36;
      }
      bias = k + Math.floor((36 * delta) / (delta + 38));
      n += Math.floor(i / len);
      i %= len;
      if (n > 0x10ffff) return null;
      out.splice(i++, 0, n);
    }
    return String.fromCodePoint(...out);
  }

  const IGNORED = /[\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b\u2060-\u2064\u206a-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\u{1bca0}-\u{1bca3}\u{1d173}-\u{1d17a}\u{e0100}-\u{e01ef}]/u;
  // Deviations, kept as they are by nontransitional processing.
  const DEVIATION = /^[\u00df\u03c2\u200c\u200d]$/u;
  const DISALLOWED = /[\p{Cc}\p{Cf}\p{Cn}\p{Co}\p{Cs}\p{Zl}\p{Zp}\p{Noncharacter_Code_Point}]/u;
  const lowerEach = (s) => Array.from(s, (c) => c.toLowerCase()).join("");

  // One code point's UTS #46 status and mapping: a string, "" when ignored, null when disallowed.
  function mapOne(ch) {
    const cp = ch.codePointAt(0);
    if (cp < 0x80) return ch >= "A" && ch <= "Z" ? ch.toLowerCase() : ch;
    if (DEVIATION.test(ch)) return ch;
    if (IGNORED.test(ch)) return "";
    if (DISALLOWED.test(ch) || MORE_DISALLOWED.test(ch)) return null;
    const fix = MAP_FIX[cp.toString(16)];
    if (fix !== undefined) return fix;
    if (cp >= 0x13a0 && cp <= 0x13f5) return ch; // Cherokee maps to its capitals
    if (cp >= 0x13f8 && cp <= 0x13fd) return String.fromCodePoint(cp - 8);
    if (cp >= 0xab70 && cp <= 0xabbf) return String.fromCodePoint(cp - 0xab70 + 0x13a0);
    return lowerEach(lowerEach(ch.normalize("NFKC")).normalize("NFKC")).normalize("NFKC");
  }

  function map(domain) {
    let out = "";
    for (const ch of domain) {
      const m = mapOne(ch);
      if (m === null) return null;
      out += m;
    }
    return out;
  }

  function bidiClass(ch) {
    if (RAL.test(ch)) return "R";
    if (AN.test(ch)) return "AN";
    if (EN.test(ch)) return "EN";
    if (L_NOT_BY_CATEGORY.test(ch)) return "L";
    if (NEUTRAL_NOT_BY_CATEGORY.test(ch)) return "ON";
    if (/[\p{Mn}\p{Me}]/u.test(ch)) return "NSM";
    if (/[\p{P}\p{S}\p{Z}\p{Cc}\p{Cf}]/u.test(ch)) return "ON";
    return "L";
  }

  // RFC 5893 section 2, for one label of a Bidi domain name.
  function bidiRuleHolds(label) {
    const classes = Array.from(label, bidiClass);
    const first = classes[0];
    let last = classes.length - 1;
    while (last > 0 && classes[last] === "NSM") last--;
    if (first === "R") {
      if (!classes.every((c) => c !== "L")) return false;
      if (!["R", "EN", "AN"].includes(classes[last])) return false;
      return !(classes.includes("EN") && classes.includes("AN"));
    }
    if (first !== "L") return false;
    if (classes.some((c) => c === "R" || c === "AN")) return false;
    return classes[last] === "L" || classes[last] === "EN";
  }

  // RFC 5892 appendix A.1 and A.2 (ZERO WIDTH NON-JOINER and JOINER).
  const TRANSPARENT = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
  function joinersHold(cps) {
    for (let i = 0; i < cps.length; i++) {
      if (cps[i] !== "\u200c" && cps[i] !== "\u200d") continue;
      if (i > 0 && VIRAMA.test(cps[i - 1])) continue;
      if (cps[i] === "\u200d") return false;
      let before = i - 1;
      while (before >= 0 && TRANSPARENT.test(cps[before]) && cps[before] !== "\u200c" && cps[before] !== "\u200d") before--;
      let after = i + 1;
      while (after < cps.length && TRANSPARENT.test(cps[after]) && cps[after] !== "\u200c" && cps[after] !== "\u200d") after++;
      if (before < 0 || !JOIN_LD.test(cps[before]) || after >= cps.length || !JOIN_RD.test(cps[after])) return false;
    }
    return true;
  }

  // The validity criteria of UTS #46 section 4.1 with WHATWG's options.
  function validLabel(label, decoded) {
    if (label === "") return true;
    if (label.normalize("NFC") !== label) return false;
    if (label.includes(".")) return false;
    const cps = Array.from(label);
    if (/^\p{M}/u.test(label)) return false;
    // A decoded label must hold only valid (or deviation) code points: none the mapping changes.
    if (decoded && cps.some((c) => mapOne(c) !== c)) return false;
    return joinersHold(cps);
  }

  function domainToASCII(domain) {
    // ASCII without an xn-- label: UTS #46 only lowercases it (every check passes).
    if (/^[\x00-\x7f]*$/.test(domain) && !/(^|\.)xn--/i.test(domain)) return domain === "" ? null : domain.toLowerCase();
    const mapped = map(domain);
    if (mapped === null) return null;
    const labels = mapped.normalize("NFC").split(".");
    const unicode = [];
    for (const label of labels) {
      if (label.startsWith("xn--")) {
        if (/[^\x00-\x7f]/.test(label)) return null;
        const decoded = punydecode(label.slice(4));
        if (decoded === null || decoded === "") return null;
        if (!validLabel(decoded, true)) return null;
        unicode.push(decoded);
      } else {
        if (!validLabel(label, false)) return null;
        unicode.push(label);
      }
    }
    // CheckBidi: in a domain with a right-to-left label, every label keeps the Bidi rule.
    if (unicode.some((l) => Array.from(l).some((c) => RAL.test(c) || AN.test(c)))) {
      if (!unicode.every((l) => l === "" || bidiRuleHolds(l))) return null;
    }
    const ascii = labels.map((l, i) => (/^[\x00-\x7f]*$/.test(l) ? l : "xn--" + punycode(unicode[i]))).join(".");
    return ascii === "" ? null : ascii;
  }

  web.domainToASCII = domainToASCII;
});
