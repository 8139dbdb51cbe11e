// web-platform-tests' URLSearchParams cases (url/urlsearchparams-*.any.js,
// url/url-searchparams.any.js, url/urlencoded-parser.any.js): case names and
// vectors in wpt/urlsearchparams.json, each check written here to assert what
// the WPT case asserts. __DATA__ is the JSON.
const DATA = __DATA__;
const S = "urlsearchparams";
const P = (init) => new URLSearchParams(init);
const str = (p) => p + "";
const pairsEq = (iterable, expected) => {
  let i = 0;
  for (const pair of iterable) arrEq(pair, expected[i++], `pair ${i}`);
};

const CHECKS = {
  "urlsearchparams-append": {
    "Append same name": () => {
      const p = P();
      p.append("a", "b"); eq(str(p), "a=b");
      p.append("a", "b"); eq(str(p), "a=b&a=b");
      p.append("a", "c"); eq(str(p), "a=b&a=b&a=c");
    },
    "Append empty strings": () => {
      const p = P();
      p.append("", ""); eq(str(p), "=");
      p.append("", ""); eq(str(p), "=&=");
    },
    "Append null": () => {
      const p = P();
      p.append(null, null); eq(str(p), "null=null");
      p.append(null, null); eq(str(p), "null=null&null=null");
    },
    "Append multiple": () => {
      const p = P();
      p.append("first", 1); p.append("second", 2); p.append("third", ""); p.append("first", 10);
      yes(p.has("first"));
      eq(p.get("first"), "1"); eq(p.get("second"), "2"); eq(p.get("third"), "");
      p.append("first", 10);
      eq(p.get("first"), "1");
    },
  },
  "urlsearchparams-constructor": {
    "Basic URLSearchParams construction": () => {
      eq(str(P()), ""); eq(str(P("")), "");
      const p = P("a=b"); eq(str(p), "a=b"); eq(str(P(p)), "a=b");
    },
    "URLSearchParams constructor, no arguments": () => eq(P().toString(), ""),
    "URLSearchParams constructor, DOMException as argument": () => {
      const names = ["INDEX_SIZE_ERR", "DOMSTRING_SIZE_ERR", "HIERARCHY_REQUEST_ERR", "WRONG_DOCUMENT_ERR",
        "INVALID_CHARACTER_ERR", "NO_DATA_ALLOWED_ERR", "NO_MODIFICATION_ALLOWED_ERR", "NOT_FOUND_ERR",
        "NOT_SUPPORTED_ERR", "INUSE_ATTRIBUTE_ERR", "INVALID_STATE_ERR", "SYNTAX_ERR", "INVALID_MODIFICATION_ERR",
        "NAMESPACE_ERR", "INVALID_ACCESS_ERR", "VALIDATION_ERR", "TYPE_MISMATCH_ERR", "SECURITY_ERR", "NETWORK_ERR",
        "ABORT_ERR", "URL_MISMATCH_ERR", "QUOTA_EXCEEDED_ERR", "TIMEOUT_ERR", "INVALID_NODE_TYPE_ERR", "DATA_CLONE_ERR"];
      eq(P(DOMException).toString(), names.map((n, i) => `${n}=${i + 1}`).join("&"));
      throwsJs(TypeError, () => P(DOMException.prototype));
    },
    "URLSearchParams constructor, empty string as argument": () => {
      const p = P("");
      yes(p != null);
      eq(Object.getPrototypeOf(p), URLSearchParams.prototype);
    },
    "URLSearchParams constructor, {} as argument": () => eq(str(P({})), ""),
    "URLSearchParams constructor, string.": () => {
      let p = P("a=b");
      yes(p.has("a")); no(p.has("b"));
      p = P("a=b&c");
      yes(p.has("a")); yes(p.has("c"));
      p = P("&a&&& &&&&&a+b=& c&m%c3%b8%c3%b8");
      yes(p.has("a")); yes(p.has("a b")); yes(p.has(" ")); no(p.has("c")); yes(p.has(" c")); yes(p.has("møø"));
    },
    "URLSearchParams constructor, object.": () => {
      const seed = P("a=b&c=d");
      const p = P(seed);
      eq(p.get("a"), "b"); eq(p.get("c"), "d"); no(p.has("d"));
      seed.append("e", "f"); no(p.has("e"));
      p.append("g", "h"); no(seed.has("g"));
    },
    "Parse +": () => {
      eq(P("a=b+c").get("a"), "b c");
      eq(P("a+b=c").get("a b"), "c");
    },
    "Parse encoded +": () => {
      const p = P();
      p.set("query", "+15555555555");
      eq(p.toString(), "query=%2B15555555555");
      eq(p.get("query"), "+15555555555");
      eq(P(p.toString()).get("query"), "+15555555555");
    },
    "Parse space": () => {
      eq(P("a=b c").get("a"), "b c");
      eq(P("a b=c").get("a b"), "c");
    },
    "Parse %20": () => {
      eq(P("a=b%20c").get("a"), "b c");
      eq(P("a%20b=c").get("a b"), "c");
    },
    "Parse \\0": () => {
      eq(P("a=b\0c").get("a"), "b\0c");
      eq(P("a\0b=c").get("a\0b"), "c");
    },
    "Parse %00": () => {
      eq(P("a=b%00c").get("a"), "b\0c");
      eq(P("a%00b=c").get("a\0b"), "c");
    },
    "Parse \u2384": () => {
      eq(P("a=b\u2384").get("a"), "b\u2384");
      eq(P("a\u2384b=c").get("a\u2384b"), "c");
    },
    "Parse %e2%8e%84": () => {
      eq(P("a=b%e2%8e%84").get("a"), "b\u2384");
      eq(P("a%e2%8e%84b=c").get("a\u2384b"), "c");
    },
    "Parse \uD83D\uDCA9": () => {
      eq(P("a=b\uD83D\uDCA9c").get("a"), "b\uD83D\uDCA9c");
      eq(P("a\uD83D\uDCA9b=c").get("a\uD83D\uDCA9b"), "c");
    },
    "Parse %f0%9f%92%a9": () => {
      eq(P("a=b%f0%9f%92%a9c").get("a"), "b\uD83D\uDCA9c");
      eq(P("a%f0%9f%92%a9b=c").get("a\uD83D\uDCA9b"), "c");
    },
    "Constructor with sequence of sequences of strings": () => {
      yes(P([]) != null);
      const p = P([["a", "b"], ["c", "d"]]);
      eq(p.get("a"), "b"); eq(p.get("c"), "d");
      throwsJs(TypeError, () => P([[1]]));
      throwsJs(TypeError, () => P([[1, 2, 3]]));
    },
    "Custom [Symbol.iterator]": () => {
      const p = P();
      p[Symbol.iterator] = function* () {
        yield ["a", "b"];
      };
      eq(P(p).get("a"), "b");
    },
  },
  "urlsearchparams-delete": {
    "Delete basics": () => {
      let p = P("a=b&c=d"); p.delete("a"); eq(str(p), "c=d");
      p = P("a=a&b=b&a=a&c=c"); p.delete("a"); eq(str(p), "b=b&c=c");
      p = P("a=a&=&b=b&c=c"); p.delete(""); eq(str(p), "a=a&b=b&c=c");
      p = P("a=a&null=null&b=b"); p.delete(null); eq(str(p), "a=a&b=b");
      p = P("a=a&undefined=undefined&b=b"); p.delete(undefined); eq(str(p), "a=a&b=b");
    },
    "Deleting appended multiple": () => {
      const p = P();
      p.append("first", 1); yes(p.has("first")); eq(p.get("first"), "1");
      p.delete("first"); no(p.has("first"));
      p.append("first", 1); p.append("first", 10); p.delete("first"); no(p.has("first"));
    },
    "Deleting all params removes ? from URL": () => {
      const u = new URL("http://example.com/?param1&param2");
      u.searchParams.delete("param1"); u.searchParams.delete("param2");
      eq(u.href, "http://example.com/"); eq(u.search, "");
    },
    "Removing non-existent param removes ? from URL": () => {
      const u = new URL("http://example.com/?");
      u.searchParams.delete("param1");
      eq(u.href, "http://example.com/"); eq(u.search, "");
    },
    "Changing the query of a URL with an opaque path with trailing spaces": () => {
      const u = new URL("data:space    ?test");
      yes(u.searchParams.has("test"));
      u.searchParams.delete("test");
      no(u.searchParams.has("test"));
      eq(u.search, ""); eq(u.pathname, "space   %20"); eq(u.href, "data:space   %20");
    },
    "Changing the query of a URL with an opaque path with trailing spaces and a fragment": () => {
      const u = new URL("data:space    ?test#test");
      u.searchParams.delete("test");
      eq(u.search, ""); eq(u.pathname, "space   %20"); eq(u.href, "data:space   %20#test");
    },
    "Two-argument delete()": () => {
      const p = P();
      p.append("a", "b"); p.append("a", "c"); p.append("a", "d");
      p.delete("a", "c");
      eq(p.toString(), "a=b&a=d");
    },
    "Two-argument delete() respects undefined as second arg": () => {
      const p = P();
      p.append("a", "b"); p.append("a", "c"); p.append("b", "c"); p.append("b", "d");
      p.delete("b", "c"); p.delete("a", undefined);
      eq(p.toString(), "b=d");
    },
  },
  "urlsearchparams-foreach": {
    "ForEach Check": () => {
      const keys = [], values = [];
      P("a=1&b=2&c=3").forEach((v, k) => { keys.push(k); values.push(v); });
      arrEq(keys, ["a", "b", "c"]); arrEq(values, ["1", "2", "3"]);
    },
    "For-of Check": () => {
      const a = new URL("http://a.b/c?a=1&b=2&c=3&d=4");
      const seen = [];
      for (const pair of a.searchParams) { a.search = "x=1&y=2&z=3"; seen.push(pair); }
      arrEq(seen[0], ["a", "1"]); arrEq(seen[1], ["y", "2"]); arrEq(seen[2], ["z", "3"]);
    },
    "empty": () => {
      for (const pair of new URL("http://a.b/c").searchParams) fail(`unexpected ${pair}`);
    },
    "delete next param during iteration": () => {
      const sp = new URL("http://localhost/query?param0=0&param1=1&param2=2").searchParams;
      const seen = [];
      for (const pair of sp) { if (pair[0] === "param0") sp.delete("param1"); seen.push(pair); }
      arrEq(seen[0], ["param0", "0"]); arrEq(seen[1], ["param2", "2"]);
    },
    "delete current param during iteration": () => {
      const sp = new URL("http://localhost/query?param0=0&param1=1&param2=2").searchParams;
      const seen = [];
      for (const pair of sp) { if (pair[0] === "param0") sp.delete("param0"); else seen.push(pair); }
      arrEq(seen[0], ["param2", "2"]);
    },
    "delete every param seen during iteration": () => {
      const sp = new URL("http://localhost/query?param0=0&param1=1&param2=2").searchParams;
      const seen = [];
      for (const pair of sp) { seen.push(pair[0]); sp.delete(pair[0]); }
      arrEq(seen, ["param0", "param2"]);
      eq(String(sp), "param1=1");
    },
  },
  "urlsearchparams-get": {
    "Get basics": () => {
      let p = P("a=b&c=d");
      eq(p.get("a"), "b"); eq(p.get("c"), "d"); eq(p.get("e"), null);
      eq(P("a=b&c=d&a=e").get("a"), "b");
      eq(P("=b&c=d").get(""), "b");
      eq(P("a=&c=d&a=e").get("a"), "");
    },
    "More get() basics": () => {
      const p = P("first=second&third&&");
      yes(p.has("first")); eq(p.get("first"), "second"); eq(p.get("third"), ""); eq(p.get("fourth"), null);
    },
  },
  "urlsearchparams-getall": {
    "getAll() basics": () => {
      const p = P("a=b&c=d");
      arrEq(p.getAll("a"), ["b"]); arrEq(p.getAll("c"), ["d"]); arrEq(p.getAll("e"), []);
      arrEq(P("a=b&c=d&a=e").getAll("a"), ["b", "e"]);
      arrEq(P("=b&c=d").getAll(""), ["b"]);
      arrEq(P("a=&c=d&a=e").getAll("a"), ["", "e"]);
    },
    "getAll() multiples": () => {
      const p = P("a=1&a=2&a=3&a");
      yes(p.has("a"));
      arrEq(p.getAll("a"), ["1", "2", "3", ""]);
      p.set("a", "one");
      eq(p.get("a"), "one");
      arrEq(p.getAll("a"), ["one"]);
    },
  },
  "urlsearchparams-has": {
    "Has basics": () => {
      const p = P("a=b&c=d");
      yes(p.has("a")); yes(p.has("c")); no(p.has("e"));
      yes(P("a=b&c=d&a=e").has("a"));
      yes(P("=b&c=d").has(""));
      yes(P("null=a").has(null));
    },
    "has() following delete()": () => {
      const p = P("a=b&c=d&&");
      p.append("first", 1); p.append("first", 2);
      yes(p.has("a")); yes(p.has("c")); yes(p.has("first")); no(p.has("d"));
      p.delete("first"); no(p.has("first"));
    },
  },
  "urlsearchparams-set": {
    "Set basics": () => {
      let p = P("a=b&c=d"); p.set("a", "B"); eq(str(p), "a=B&c=d");
      p = P("a=b&c=d&a=e"); p.set("a", "B"); eq(str(p), "a=B&c=d");
      p.set("e", "f"); eq(str(p), "a=B&c=d&e=f");
    },
    "URLSearchParams.set": () => {
      const p = P("a=1&a=2&a=3");
      yes(p.has("a")); eq(p.get("a"), "1"); eq(str(p), "a=1&a=2&a=3");
      p.set("first", 4);
      yes(p.has("a")); eq(p.get("a"), "1"); eq(str(p), "a=1&a=2&a=3&first=4");
      p.set("a", 4);
      yes(p.has("a")); eq(p.get("a"), "4"); eq(str(p), "a=4&first=4");
    },
  },
  "urlsearchparams-size": {
    "URLSearchParams's size and deletion": () => {
      const p = P("a=1&b=2&a=3"); eq(p.size, 3);
      p.delete("a"); eq(p.size, 1);
    },
    "URLSearchParams's size and addition": () => {
      const p = P("a=1&b=2&a=3"); eq(p.size, 3);
      p.append("b", "4"); eq(p.size, 4);
    },
    "URLSearchParams's size when obtained from a URL": () => {
      const u = new URL("http://localhost/query?a=1&b=2&a=3");
      eq(u.searchParams.size, 3);
      u.searchParams.delete("a"); eq(u.searchParams.size, 1);
      u.searchParams.append("b", 4); eq(u.searchParams.size, 2);
    },
    "URLSearchParams's size when obtained from a URL and using .search": () => {
      const u = new URL("http://localhost/query?a=1&b=2&a=3");
      eq(u.searchParams.size, 3);
      u.search = "?"; eq(u.searchParams.size, 0);
    },
  },
  "urlsearchparams-sort": {
    "Sorting non-existent params removes ? from URL": () => {
      const u = new URL("http://example.com/?");
      u.searchParams.sort();
      eq(u.href, "http://example.com/"); eq(u.search, "");
    },
  },
  "urlsearchparams-stringifier": {
    "Serialize space": () => {
      const p = P(); p.append("a", "b c"); eq(str(p), "a=b+c");
      p.delete("a"); p.append("a b", "c"); eq(str(p), "a+b=c");
    },
    "Serialize empty value": () => {
      const p = P();
      p.append("a", ""); eq(str(p), "a=");
      p.append("a", ""); eq(str(p), "a=&a=");
      p.append("", "b"); eq(str(p), "a=&a=&=b");
      p.append("", ""); eq(str(p), "a=&a=&=b&=");
      p.append("", ""); eq(str(p), "a=&a=&=b&=&=");
    },
    "Serialize empty name": () => {
      const p = P(); p.append("", "b"); eq(str(p), "=b");
      p.append("", "b"); eq(str(p), "=b&=b");
    },
    "Serialize empty name and value": () => {
      const p = P(); p.append("", ""); eq(str(p), "=");
      p.append("", ""); eq(str(p), "=&=");
    },
    "Serialize +": () => {
      const p = P(); p.append("a", "b+c"); eq(str(p), "a=b%2Bc");
      p.delete("a"); p.append("a+b", "c"); eq(str(p), "a%2Bb=c");
    },
    "Serialize =": () => {
      const p = P(); p.append("=", "a"); eq(str(p), "%3D=a");
      p.append("b", "="); eq(str(p), "%3D=a&b=%3D");
    },
    "Serialize &": () => {
      const p = P(); p.append("&", "a"); eq(str(p), "%26=a");
      p.append("b", "&"); eq(str(p), "%26=a&b=%26");
    },
    "Serialize *-._": () => {
      const p = P(); p.append("a", "*-._"); eq(str(p), "a=*-._");
      p.delete("a"); p.append("*-._", "c"); eq(str(p), "*-._=c");
    },
    "Serialize %": () => {
      const p = P(); p.append("a", "b%c"); eq(str(p), "a=b%25c");
      p.delete("a"); p.append("a%b", "c"); eq(str(p), "a%25b=c");
    },
    "Serialize \\0": () => {
      const p = P(); p.append("a", "b\0c"); eq(str(p), "a=b%00c");
      p.delete("a"); p.append("a\0b", "c"); eq(str(p), "a%00b=c");
    },
    "Serialize \uD83D\uDCA9": () => {
      const p = P(); p.append("a", "b\uD83D\uDCA9c"); eq(str(p), "a=b%F0%9F%92%A9c");
      p.delete("a"); p.append("a\uD83D\uDCA9b", "c"); eq(str(p), "a%F0%9F%92%A9b=c");
    },
    "URLSearchParams.toString": () => {
      eq(P("a=b&c=d&&e&&").toString(), "a=b&c=d&e=");
      eq(P("a = b &a=b&c=d%20").toString(), "a+=+b+&a=b&c=d+");
      eq(P("a=&a=b").toString(), "a=&a=b");
    },
    "URLSearchParams connected to URL": () => {
      const u = new URL("http://www.example.com/?a=b,c");
      const p = u.searchParams;
      eq(u.toString(), "http://www.example.com/?a=b,c"); eq(p.toString(), "a=b%2Cc");
      p.append("x", "y");
      eq(u.toString(), "http://www.example.com/?a=b%2Cc&x=y"); eq(p.toString(), "a=b%2Cc&x=y");
    },
  },
  "url-searchparams": {
    "URL.searchParams getter": () => {
      const u = new URL("http://example.org/?a=b", "about:blank");
      yes("searchParams" in u);
      yes(u.searchParams === u.searchParams);
    },
    "URL.searchParams updating, clearing": () => {
      const u = new URL("http://example.org/?a=b", "about:blank");
      const sp = u.searchParams;
      eq(sp.toString(), "a=b");
      sp.set("a", "b");
      eq(u.searchParams.toString(), "a=b"); eq(u.search, "?a=b");
      u.search = "";
      eq(u.searchParams.toString(), ""); eq(u.search, ""); eq(sp.toString(), "");
    },
    "URL.searchParams setter, invalid values": () => {
      const u = new URL("http://example.org", "about:blank");
      throwsJs(TypeError, () => {
        "use strict";
        u.searchParams = P("http://example.org");
      });
    },
    "URL.searchParams and URL.search setters, update propagation": () => {
      const u = new URL("http://example.org/file?a=b&c=d", "about:blank");
      const sp = u.searchParams;
      eq(u.search, "?a=b&c=d"); eq(sp.toString(), "a=b&c=d");
      u.search = "e=f&g=h";
      eq(u.search, "?e=f&g=h"); eq(sp.toString(), "e=f&g=h");
      u.search = "?e=f&g=h";
      eq(u.search, "?e=f&g=h"); eq(sp.toString(), "e=f&g=h");
      sp.append("i", " j ");
      eq(u.search, "?e=f&g=h&i=+j+"); eq(u.searchParams.toString(), "e=f&g=h&i=+j+"); eq(sp.get("i"), " j ");
      sp.set("e", "updated");
      eq(u.search, "?e=updated&g=h&i=+j+"); eq(sp.get("e"), "updated");
      const u2 = new URL("http://example.org/file??a=b&c=d", "about:blank");
      eq(u2.search, "??a=b&c=d"); eq(u2.searchParams.toString(), "%3Fa=b&c=d");
      u2.href = "http://example.org/file??a=b";
      eq(u2.search, "??a=b"); eq(u2.searchParams.toString(), "%3Fa=b");
    },
  },
};

for (const [file, names] of Object.entries(DATA.cases)) byName(S, file, names, CHECKS[file] || {});

for (const t of DATA.construct_with) {
  test(S, "urlsearchparams-constructor", `Construct with ${t.name}`, () => pairsEq(P(t.input), t.output));
}
for (const t of DATA.sort) {
  test(S, "urlsearchparams-sort", `Parse and sort: ${t.input}`, () => {
    const p = P(t.input);
    p.sort();
    pairsEq(p, t.output);
  });
  test(S, "urlsearchparams-sort", `URL parse and sort: ${t.input}`, () => {
    const u = new URL("?" + t.input, "https://example/");
    u.searchParams.sort();
    pairsEq(P(u.search), t.output);
  });
}
for (const t of DATA.urlencoded) {
  test(S, "urlencoded-parser", `URLSearchParams constructed with: ${t.input}`, () => pairsEq(P(t.input), t.output));
  test(S, "urlencoded-parser", `request.formData() with input: ${t.input}`, async () => {
    const headers = { "Content-Type": "application/x-www-form-urlencoded;charset=windows-1252" };
    pairsEq(await new Request("about:blank", { body: t.input, method: "LADIDA", headers }).formData(), t.output);
  });
  test(S, "urlencoded-parser", `response.formData() with input: ${t.input}`, async () => {
    const headers = { "Content-Type": "application/x-www-form-urlencoded;charset=shift_jis" };
    pairsEq(await new Response(t.input, { headers }).formData(), t.output);
  });
}

await runAll();
