// The web-platform-tests URL data (wpt/*.json, vendored) run the way WPT's
// url-constructor, url-origin, url-setters, toascii and IdnaTestV2 tests run
// them. One line per case, "suite index ok|fail"; the Python side compares the
// lines of node and of hugind. __DATA__ is replaced by the JSON of the files.
const DATA = __DATA__;

const results = [];
function check(suite, index, fn) {
  let ok;
  try {
    ok = fn() === true;
  } catch (e) {
    ok = false;
  }
  results.push(`${suite} ${index} ${ok ? "ok" : "fail"}`);
}
const throwsTypeError = (fn) => {
  try {
    fn();
  } catch (e) {
    return e instanceof TypeError;
  }
  return false;
};
const FIELDS = ["href", "protocol", "username", "password", "host", "hostname", "port", "pathname", "search", "hash"];

DATA.urltestdata.forEach((t, i) => {
  if (typeof t === "string") return;
  const make = () => (t.base === null ? new URL(t.input) : new URL(t.input, t.base));
  if (t.failure) {
    check("constructor", i, () => throwsTypeError(make));
    if (t.base === null) check("canParse", i, () => URL.canParse(t.input) === false);
    return;
  }
  check("constructor", i, () => {
    const u = make();
    if (!FIELDS.every((f) => u[f] === t[f])) return false;
    if ("searchParams" in t && u.searchParams.toString() !== t.searchParams) return false;
    return true;
  });
  if ("origin" in t) check("origin", i, () => make().origin === t.origin);
  check("canParse", i, () => URL.canParse(t.input, t.base === null ? undefined : t.base) === true);
});

for (const [attr, cases] of Object.entries(DATA.setters)) {
  if (attr === "comment") continue;
  cases.forEach((t, i) => {
    check(`setters.${attr}`, i, () => {
      const u = new URL(t.href);
      u[attr] = t.new_value;
      return Object.entries(t.expected).every(([k, v]) => u[k] === v);
    });
  });
}

function hostCases(suite, list) {
  list.forEach((t, i) => {
    if (typeof t === "string" || t.input === "") return;
    check(suite, i, () => {
      if (t.output === null) return throwsTypeError(() => new URL(`https://${t.input}/x`));
      const u = new URL(`https://${t.input}/x`);
      return u.host === t.output && u.hostname === t.output && u.pathname === "/x" && u.href === `https://${t.output}/x`;
    });
  });
}
hostCases("toascii", DATA.toascii);
hostCases("idna", DATA.idna);
// toascii.window.js also sets host and hostname on an existing URL.
DATA.toascii.forEach((t, i) => {
  if (typeof t === "string") return;
  for (const attr of ["host", "hostname"]) {
    check(`toascii.${attr}`, i, () => {
      const u = new URL("https://x/x");
      u[attr] = t.input;
      return u[attr] === (t.output === null ? "x" : t.output);
    });
  }
});

console.log(results.join("\n"));
console.log("done");
