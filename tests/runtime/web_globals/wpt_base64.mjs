// web-platform-tests' base64 cases (html/webappapis/atob/base64.any.js, with
// its atob vectors from fetch/data-urls/resources/base64.json), data in
// wpt/base64.json, checked as that test checks them. __DATA__ is the JSON.
const DATA = __DATA__;

// The WebIDL inputs the data names by tag rather than by value.
const IDL = {
  undefined: undefined,
  null: null,
  7: 7,
  12: 12,
  1.5: 1.5,
  true: true,
  false: false,
  NaN: NaN,
  Infinity: Infinity,
  "-Infinity": -Infinity,
  0: 0,
  "-0": -0,
  "obj:foo": { toString: () => "foo" },
  "obj:abcd": { toString: () => "abcd" },
};
const inputOf = (t) => ("idl" in t ? IDL[t.idl] : t.input);
const label = (t) => ("idl" in t ? t.idl : t.name || JSON.stringify(t.input));

for (const t of DATA.btoa) {
  const input = inputOf(t);
  const name = t.expected === null ? `btoa(${label(t)}) must raise INVALID_CHARACTER_ERR` : `btoa(${label(t)}) == "${t.expected}"`;
  test("base64", "base64", name, () => {
    if (t.expected === null) return throwsDom("InvalidCharacterError", () => btoa(input));
    eq(btoa(input), t.expected, "btoa");
    eq(atob(btoa(input)), String(input), "atob(btoa(input))");
  });
}

for (const t of DATA.atob) {
  const input = inputOf(t);
  test("base64", "base64", `atob(${label(t)})`, () => {
    if (t.output === null) return throwsDom("InvalidCharacterError", () => globalThis.atob(input));
    const result = globalThis.atob(input);
    t.output.forEach((code, i) => eq(result.charCodeAt(i), code, `code unit ${i}`));
  });
}

await runAll();
