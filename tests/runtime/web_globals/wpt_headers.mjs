// web-platform-tests' Headers cases (fetch/api/headers/*.any.js but the ones
// that need WPT's HTTP server or a no-cors Request): names and values in
// wpt/headers.json, each check written here to assert what the WPT case
// asserts. __DATA__ is the JSON. headers-record's checks are
// wpt_headers_record.mjs, run after this in the same script.
const DATA = __DATA__;
const S = "headers";
const H = (init) => new Headers(init);

const headerDict = Object.fromEntries(DATA.header_dict.map(([k, v]) => [k, v !== null && typeof v === "object" ? undefined : v]));
const headerSeq = Object.keys(headerDict).map((k) => [k, headerDict[k]]);
const entriesDict = DATA.entries_dict;
const sortedKeys = Object.keys(entriesDict).map((k) => k.toLowerCase()).sort();
const sortedDict = Object.fromEntries(Object.entries(entriesDict).map(([k, v]) => [k.toLowerCase(), v]));
const entryValues = Object.values(entriesDict);
const iteratorPrototype = Object.getPrototypeOf(Object.getPrototypeOf([][Symbol.iterator]()));
function iteratorShape(it) {
  const proto = Object.getPrototypeOf(it);
  eq(Object.getPrototypeOf(proto), iteratorPrototype);
  const d = Object.getOwnPropertyDescriptor(proto, "next");
  yes(d.configurable);
  yes(d.enumerable);
  yes(d.writable);
}
function allGet(headers, dict) {
  for (const name in dict) eq(headers.get(name), String(dict[name]), name);
}
function iterateWhile(init, onEach) {
  const headers = H(init);
  const keys = [];
  const values = [];
  for (const [k, v] of headers) {
    keys.push(k);
    values.push(v);
    onEach(headers, k);
  }
  return [keys, values];
}
const caseDict = DATA.case_dict;
function checkCase(name, headers) {
  const want = caseDict[name];
  eq(headers.get(name), want);
  eq(headers.get(name.toLowerCase()), want);
  eq(headers.get(name.toUpperCase()), want);
}
const combineSeq = DATA.combine_seq;
const combineExpected = DATA.combine_expected;
const norm = DATA.normalize;

const setCookies = DATA.set_cookie_list;
const setCookies2 = DATA.set_cookie2_list;

const CHECKS = {
  "headers-basic": {
    "Create headers from no parameter": () => H(),
    "Create headers from undefined parameter": () => H(undefined),
    "Create headers from empty object": () => H({}),
    "Create headers with null should throw": () => throwsJs(TypeError, () => H(null)),
    "Create headers with 1 should throw": () => throwsJs(TypeError, () => H(1)),
    "Create headers with sequence": () => {
      const h = H(headerSeq);
      allGet(h, headerDict);
      eq(h.get("length"), null);
    },
    "Create headers with record": () => allGet(H(headerDict), headerDict),
    "Create headers with existing headers": () => allGet(H(H(headerDict)), headerDict),
    "Create headers with existing headers with custom iterator": () => {
      const h = H();
      h[Symbol.iterator] = function* () {
        yield ["test", "test"];
      };
      eq(H(h).get("test"), "test");
    },
    "Check append method": () => {
      const h = H();
      for (const name in headerDict) {
        h.append(name, headerDict[name]);
        eq(h.get(name), String(headerDict[name]));
      }
    },
    "Check set method": () => {
      const h = H();
      for (const name in headerDict) {
        h.set(name, headerDict[name]);
        eq(h.get(name), String(headerDict[name]));
      }
    },
    "Check has method": () => {
      const h = H(headerDict);
      for (const name in headerDict) yes(h.has(name));
      no(h.has("nameNotInHeaders"));
    },
    "Check delete method": () => {
      const h = H(headerDict);
      for (const name in headerDict) {
        yes(h.has(name));
        h.delete(name);
        yes(!h.has(name));
      }
    },
    "Check get method": () => {
      const h = H(headerDict);
      allGet(h, headerDict);
      eq(h.get("nameNotInHeaders"), null);
    },
    "Check keys method": () => {
      const h = H(entriesDict);
      const it = h.keys();
      iteratorShape(it);
      for (const key of sortedKeys) {
        const e = it.next();
        no(e.done);
        eq(e.value, key);
      }
      yes(it.next().done);
      yes(it.next().done);
      for (const key of h.keys()) yes(sortedKeys.includes(key));
    },
    "Check values method": () => {
      const h = H(entriesDict);
      const it = h.values();
      iteratorShape(it);
      for (const key of sortedKeys) {
        const e = it.next();
        no(e.done);
        eq(e.value, sortedDict[key]);
      }
      yes(it.next().done);
      yes(it.next().done);
      for (const value of h.values()) yes(entryValues.includes(value));
    },
    "Check entries method": () => {
      const h = H(entriesDict);
      const it = h.entries();
      iteratorShape(it);
      for (const key of sortedKeys) {
        const e = it.next();
        no(e.done);
        eq(e.value[0], key);
        eq(e.value[1], sortedDict[key]);
      }
      yes(it.next().done);
      yes(it.next().done);
      for (const entry of h.entries()) eq(entry[1], sortedDict[entry[0]]);
    },
    "Check Symbol.iterator method": () => {
      const it = H(entriesDict)[Symbol.iterator]();
      for (const key of sortedKeys) {
        const e = it.next();
        no(e.done);
        eq(e.value[0], key);
        eq(e.value[1], sortedDict[key]);
      }
      yes(it.next().done);
      yes(it.next().done);
    },
    "Check forEach method": () => {
      const h = H(entriesDict);
      const ref = sortedKeys[Symbol.iterator]();
      h.forEach((value, key, container) => {
        eq(container, h);
        const e = ref.next();
        no(e.done);
        eq(key, e.value);
        eq(value, sortedDict[e.value]);
      });
      yes(ref.next().done);
    },
    "Iteration skips elements removed while iterating": () => {
      const [keys, values] = iterateWhile({ foo: "2", baz: "1", BAR: "0" }, (h) => h.delete("foo"));
      arrEq(keys, ["bar", "baz"]);
      arrEq(values, ["0", "1"]);
    },
    "Removing elements already iterated over causes an element to be skipped during iteration": () => {
      const [keys, values] = iterateWhile({ foo: "2", baz: "1", BAR: "0", quux: "3" }, (h, k) => {
        if (k === "baz") h.delete("bar");
      });
      arrEq(keys, ["bar", "baz", "quux"]);
      arrEq(values, ["0", "1", "3"]);
    },
    "Appending a value pair during iteration causes it to be reached during iteration": () => {
      const [keys, values] = iterateWhile({ foo: "2", baz: "1", BAR: "0", quux: "3" }, (h, k) => {
        if (k === "baz") h.append("X-yZ", "4");
      });
      arrEq(keys, ["bar", "baz", "foo", "quux", "x-yz"]);
      arrEq(values, ["0", "1", "2", "3", "4"]);
    },
    "Prepending a value pair before the current element position causes it to be skipped during iteration": () => {
      const [keys, values] = iterateWhile({ foo: "2", baz: "1", BAR: "0", quux: "3" }, (h, k) => {
        if (k === "baz") h.append("abc", "-1");
      });
      arrEq(keys, ["bar", "baz", "baz", "foo", "quux"]);
      arrEq(values, ["0", "1", "1", "2", "3"]);
    },
  },
  "headers-casing": {
    "Create headers, names use characters with different case": () => {
      const h = H(caseDict);
      for (const name in caseDict) checkCase(name, h);
    },
    "Check append method, names use characters with different case": () => {
      const h = H();
      for (const name in caseDict) {
        h.append(name, caseDict[name]);
        checkCase(name, h);
      }
    },
    "Check set method, names use characters with different case": () => {
      const h = H();
      for (const name in caseDict) {
        h.set(name, caseDict[name]);
        checkCase(name, h);
      }
    },
    "Check delete method, names use characters with different case": () => {
      const h = H();
      for (const name in caseDict) h.set(name, caseDict[name]);
      for (const name in caseDict) h.delete(name.toLowerCase());
      for (const name in caseDict) no(h.has(name));
    },
  },
  "headers-combine": {
    "Create headers using same name for different values": () => {
      const h = H(combineSeq);
      for (const name in combineExpected) eq(h.get(name), combineExpected[name]);
    },
    "Check delete and has methods when using same name for different values": () => {
      const h = H(combineSeq);
      for (const name in combineExpected) {
        yes(h.has(name));
        h.delete(name);
        no(h.has(name));
      }
    },
    "Check set methods when called with already used name": () => {
      const h = H(combineSeq);
      for (const name in combineExpected) {
        h.set(name, "newSingleValue");
        eq(h.get(name), "newSingleValue");
      }
    },
    "Check append methods when called with already used name": () => {
      const h = H(combineSeq);
      for (const name in combineExpected) {
        const before = h.get(name);
        h.append(name, "newSingleValue");
        eq(h.get(name), before + ", newSingleValue");
      }
    },
    "Iterate combined values": () => {
      for (const pair of H([["1", "a"], ["1", "b"]])) arrEq(pair, ["1", "a, b"]);
    },
    "Iterate combined values in sorted order": () => {
      const expected = [["1", "b"], ["2", "a, b"]];
      let i = 0;
      for (const pair of H([["2", "a"], ["1", "b"], ["2", "b"]])) arrEq(pair, expected[i++]);
      eq(i, 2);
    },
  },
  "headers-errors": {
    "Create headers giving an array having one string as init argument": () => throwsJs(TypeError, () => H([["name"]])),
    "Create headers giving an array having three strings as init argument": () =>
      throwsJs(TypeError, () => H([["invalid", "invalidValue1", "invalidValue2"]])),
    "Create headers giving bad header name as init argument": () => throwsJs(TypeError, () => H([["invalid\u0100", "Value1"]])),
    "Create headers giving bad header value as init argument": () => throwsJs(TypeError, () => H([["name", "invalidValue\u0100"]])),
    "Check headers get with an invalid name invalid\u0100": () => throwsJs(TypeError, () => H().get("invalid\u0100")),
    "Check headers get with an invalid name [object Object]": () => throwsJs(TypeError, () => H().get({})),
    "Check headers delete with an invalid name invalid\u0100": () => throwsJs(TypeError, () => H().delete("invalid\u0100")),
    "Check headers delete with an invalid name [object Object]": () => throwsJs(TypeError, () => H().delete({})),
    "Check headers has with an invalid name invalid\u0100": () => throwsJs(TypeError, () => H().has("invalid\u0100")),
    "Check headers has with an invalid name [object Object]": () => throwsJs(TypeError, () => H().has({})),
    "Check headers set with an invalid name invalid\u0100": () => throwsJs(TypeError, () => H().set("invalid\u0100", "Value1")),
    "Check headers set with an invalid name [object Object]": () => throwsJs(TypeError, () => H().set({}, "Value1")),
    "Check headers set with an invalid value invalid\u0100": () => throwsJs(TypeError, () => H().set("name", "invalid\u0100")),
    // Both append-name cases of WPT append the name "invalid\u0100", whatever the bad name listed.
    "Check headers append with an invalid name invalid\u0100": () => throwsJs(TypeError, () => H().append("invalid\u0100", "Value1")),
    "Check headers append with an invalid name [object Object]": () => throwsJs(TypeError, () => H().append("invalid\u0100", "Value1")),
    "Check headers append with an invalid value invalid\u0100": () => throwsJs(TypeError, () => H().append("name", "invalid\u0100")),
    "Headers forEach throws if argument is not callable": () => {
      const h = H([["name", "value"]]);
      throwsJs(TypeError, () => h.forEach());
      throwsJs(TypeError, () => h.forEach(undefined));
      throwsJs(TypeError, () => h.forEach(1));
    },
    "Headers forEach loop should stop if callback is throwing exception": () => {
      const h = H([["name1", "value1"], ["name2", "value2"], ["name3", "value3"]]);
      let counter = 0;
      try {
        h.forEach((value, name) => {
          counter++;
          if (name == "name2") throw "error";
        });
      } catch (e) {
        eq(counter, 2);
        eq(e, "error");
        return;
      }
      fail("forEach did not throw");
    },
  },
  "headers-normalize": {
    "Create headers with not normalized values": () => {
      const h = H(Object.fromEntries(Object.entries(norm).map(([k, [given]]) => [k, given])));
      for (const name in norm) eq(h.get(name), norm[name][1]);
    },
    "Check append method with not normalized values": () => {
      const h = H();
      for (const name in norm) {
        h.append(name, norm[name][0]);
        eq(h.get(name), norm[name][1]);
      }
    },
    "Check set method with not normalized values": () => {
      const h = H();
      for (const name in norm) {
        h.set(name, norm[name][0]);
        eq(h.get(name), norm[name][1]);
      }
    },
  },
  "headers-structure": Object.fromEntries(
    ["append", "delete", "get", "has", "set", "entries", "keys", "values"].map((m) => [
      `Headers has ${m} method`,
      () => yes(m in H()),
    ]),
  ),
  "header-setcookie": {
    "Headers.prototype.get combines set-cookie headers in order": () =>
      eq(H(setCookies).get("set-cookie"), "foo=bar, fizz=buzz; domain=example.com"),
    "Headers iterator does not combine set-cookie headers": () =>
      nestedEq([...H(setCookies)], [["set-cookie", "foo=bar"], ["set-cookie", "fizz=buzz; domain=example.com"]]),
    "Headers iterator does not special case set-cookie2 headers": () =>
      nestedEq([...H(setCookies2)], [["set-cookie2", "foo2=bar2, fizz2=buzz2; domain=example2.com"]]),
    "Headers iterator does not combine set-cookie & set-cookie2 headers": () =>
      nestedEq([...H([...setCookies, ...setCookies2])], [
        ["set-cookie", "foo=bar"],
        ["set-cookie", "fizz=buzz; domain=example.com"],
        ["set-cookie2", "foo2=bar2, fizz2=buzz2; domain=example2.com"],
      ]),
    "Headers iterator preserves set-cookie ordering": () => {
      const list = [["set-cookie", "z=z"], ["set-cookie", "a=a"], ["set-cookie", "n=n"]];
      nestedEq([...H(list)], list);
    },
    "Headers iterator preserves per header ordering, but sorts keys alphabetically": () =>
      nestedEq(
        [...H([["xylophone-header", "1"], ["best-header", "2"], ["set-cookie", "3"], ["a-cool-header", "4"], ["set-cookie", "5"], ["a-cool-header", "6"], ["best-header", "7"]])],
        [["a-cool-header", "4, 6"], ["best-header", "2, 7"], ["set-cookie", "3"], ["set-cookie", "5"], ["xylophone-header", "1"]],
      ),
    "Headers iterator preserves per header ordering, but sorts keys alphabetically (and ignores value ordering)": () =>
      nestedEq(
        [...H([["xylophone-header", "7"], ["best-header", "6"], ["set-cookie", "5"], ["a-cool-header", "4"], ["set-cookie", "3"], ["a-cool-header", "2"], ["best-header", "1"]])],
        [["a-cool-header", "4, 2"], ["best-header", "6, 1"], ["set-cookie", "5"], ["set-cookie", "3"], ["xylophone-header", "7"]],
      ),
    "Headers iterator is correctly updated with set-cookie changes": () => {
      const h = H([["fizz", "buzz"], ["X-Header", "test"]]);
      const it = h[Symbol.iterator]();
      arrEq(it.next().value, ["fizz", "buzz"]);
      h.append("Set-Cookie", "a=b");
      arrEq(it.next().value, ["set-cookie", "a=b"]);
      h.append("Accept", "text/html");
      arrEq(it.next().value, ["set-cookie", "a=b"]);
      arrEq(it.next().value, ["x-header", "test"]);
      h.append("set-cookie", "c=d");
      arrEq(it.next().value, ["x-header", "test"]);
      yes(it.next().done);
    },
    "Headers iterator is correctly updated with set-cookie changes #2": () => {
      const h = H([["set-cookie", "a"], ["set-cookie", "b"], ["set-cookie", "c"]]);
      const it = h[Symbol.iterator]();
      arrEq(it.next().value, ["set-cookie", "a"]);
      h.delete("set-cookie");
      h.append("set-cookie", "d");
      h.append("set-cookie", "e");
      h.append("set-cookie", "f");
      arrEq(it.next().value, ["set-cookie", "e"]);
      arrEq(it.next().value, ["set-cookie", "f"]);
      yes(it.next().done);
    },
    "Headers.prototype.has works for set-cookie": () => yes(H(setCookies).has("sEt-cOoKiE")),
    "Headers.prototype.append works for set-cookie": () => {
      const h = H(setCookies2);
      h.append("set-Cookie", "foo=bar");
      h.append("sEt-cOoKiE", "fizz=buzz");
      nestedEq([...h], [["set-cookie", "foo=bar"], ["set-cookie", "fizz=buzz"], ["set-cookie2", "foo2=bar2, fizz2=buzz2; domain=example2.com"]]);
    },
    "Headers.prototype.set works for set-cookie": () => {
      const h = H(setCookies);
      h.set("set-cookie", "foo2=bar2");
      nestedEq([...h], [["set-cookie", "foo2=bar2"]]);
    },
    "Headers.prototype.delete works for set-cookie": () => {
      const h = H(setCookies);
      h.delete("set-Cookie");
      nestedEq([...h], []);
    },
    "Headers.prototype.getSetCookie with no headers present": () => arrEq(H().getSetCookie(), []),
    "Headers.prototype.getSetCookie with one header": () => arrEq(H([setCookies[0]]).getSetCookie(), ["foo=bar"]),
    "Headers.prototype.getSetCookie with one header created from an object": () =>
      arrEq(H({ "Set-Cookie": "foo=bar" }).getSetCookie(), ["foo=bar"]),
    "Headers.prototype.getSetCookie with multiple headers": () =>
      arrEq(H(setCookies).getSetCookie(), ["foo=bar", "fizz=buzz; domain=example.com"]),
    "Headers.prototype.getSetCookie with an empty header": () => arrEq(H([["set-cookie", ""]]).getSetCookie(), [""]),
    "Headers.prototype.getSetCookie with two equal headers": () =>
      arrEq(H([["set-cookie", "x"], ["set-cookie", "x"]]).getSetCookie(), ["x", "x"]),
    "Headers.prototype.getSetCookie ignores set-cookie2 headers": () =>
      arrEq(H([["set-cookie2", "x"], ["set-cookie", "y"], ["set-cookie2", "z"]]).getSetCookie(), ["y"]),
    "Headers.prototype.getSetCookie preserves header ordering": () =>
      arrEq(H([["set-cookie", "z=z"], ["set-cookie", "a=a"], ["set-cookie", "n=n"]]).getSetCookie(), ["z=z", "a=a", "n=n"]),
    "Adding Set-Cookie headers normalizes their value": () => {
      const h = H({ "Set-Cookie": "  a=b\n" });
      h.append("set-cookie", "\n\rc=d  ");
      nestedEq([...h], [["set-cookie", "a=b"], ["set-cookie", "c=d"]]);
      h.set("set-cookie", "\te=f ");
      nestedEq([...h], [["set-cookie", "e=f"]]);
    },
    "Adding invalid Set-Cookie headers throws": () => {
      throwsJs(TypeError, () => H({ "set-cookie": "\0" }));
      const h = H();
      throwsJs(TypeError, () => h.append("Set-Cookie", "a\nb"));
      throwsJs(TypeError, () => h.set("Set-Cookie", "a\rb"));
    },
    "Set-Cookie is a forbidden response header": () => {
      const r = new Response();
      r.headers.append("Set-Cookie", "foo=bar");
      arrEq(r.headers.getSetCookie(), []);
      r.headers.append("sEt-cOokIe", "bar=baz");
      arrEq(r.headers.getSetCookie(), []);
    },
  },
};

