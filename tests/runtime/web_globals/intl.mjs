// Intl for en-US in UTC: what toLocaleString users need most.
const show = (x) => console.log(JSON.stringify(x));
const nf = (opts) => (v) => new Intl.NumberFormat("en-US", opts).format(v);
const numbers = [0, -0, 1, -1, 0.5, 1.005, 2.5, -2.5, 12.345, 999.9995, 1234.5, 1234567.891, -9876543.21, 0.000001234, 1e21, NaN, Infinity, -Infinity, 123456789012345680000];
for (const opts of [undefined, { maximumFractionDigits: 0 }, { minimumFractionDigits: 2 }, { minimumFractionDigits: 1, maximumFractionDigits: 1 },
  { maximumFractionDigits: 2 }, { useGrouping: false }, { minimumIntegerDigits: 3 }, { maximumSignificantDigits: 3 }, { minimumSignificantDigits: 5 },
  { style: "percent" }, { style: "percent", maximumFractionDigits: 2 }, { style: "currency", currency: "USD" }, { style: "currency", currency: "EUR" },
  { style: "currency", currency: "JPY" }, { style: "currency", currency: "GBP", minimumFractionDigits: 0 }, { style: "currency", currency: "CHF" },
  { style: "currency", currency: "USD", currencyDisplay: "code" }, { signDisplay: "always" }, { signDisplay: "exceptZero" }, { signDisplay: "never" }]) {
  show([opts ?? null, numbers.map(nf(opts))]);
}
show([(1234.5).toLocaleString(), (1234.5).toLocaleString("en-US", { style: "currency", currency: "USD" }), 12345678901234567890n.toLocaleString()]);
show(new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).formatToParts(-1234.5));
show(new Intl.NumberFormat("en-US", { style: "percent" }).resolvedOptions().maximumFractionDigits);
const dates = [Date.UTC(2024, 0, 2, 15, 4, 5, 6), Date.UTC(1999, 11, 31, 0, 0, 0), Date.UTC(2030, 6, 14, 12, 30, 9), Date.UTC(2024, 1, 29, 23, 59, 59)];
for (const t of dates) {
  const d = new Date(t);
  show([d.toLocaleString(), d.toLocaleDateString(), d.toLocaleTimeString(), d.toLocaleString("en-US", { timeZone: "UTC" })]);
  for (const ds of ["full", "long", "medium", "short"]) {
    show([ds, d.toLocaleDateString("en-US", { dateStyle: ds }), d.toLocaleTimeString("en-US", { timeStyle: ds }), d.toLocaleString("en-US", { dateStyle: ds, timeStyle: "short" })]);
  }
  for (const o of [{ year: "numeric", month: "long", day: "numeric" }, { month: "short", day: "numeric" }, { year: "numeric", month: "2-digit", day: "2-digit" },
    { weekday: "long" }, { weekday: "short", month: "long", day: "numeric", year: "numeric" }, { month: "long", year: "numeric" },
    { hour: "2-digit", minute: "2-digit" }, { hour: "numeric" }, { year: "2-digit", month: "numeric" },
    { month: "long", day: "numeric", year: "numeric", hour: "numeric", minute: "2-digit" }, { hour: "numeric", minute: "2-digit", timeZoneName: "short" }]) {
    show([o, new Intl.DateTimeFormat("en-US", { ...o, timeZone: "UTC" }).format(d)]);
  }
}
show(new Date(NaN).toLocaleString());
const words = ["b", "a", "B", "A", "á", "Á", "ab", "aB", "Ab", "abc", "10", "9", "1", "z", "Z", "é", "e", "f", "_", "-", " x", "résumé", "resume", "Resume"];
show([...words].sort(new Intl.Collator("en").compare));
show([...words].sort((x, y) => x.localeCompare(y)));
show(["a10", "a9", "a1", "a100", "b2"].sort(new Intl.Collator("en", { numeric: true }).compare));
for (const sensitivity of ["base", "accent", "case", "variant"]) {
  const c = new Intl.Collator("en", { sensitivity });
  show([sensitivity, c.compare("a", "A"), c.compare("a", "á"), c.compare("a", "b"), c.compare("résumé", "Resume")]);
}
const pr = new Intl.PluralRules("en-US");
const po = new Intl.PluralRules("en-US", { type: "ordinal" });
show([0, 1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 111].map((n) => `${n}:${pr.select(n)}:${po.select(n)}`));
show([new Intl.ListFormat("en", { type: "conjunction" }).format(["a", "b", "c"]), new Intl.ListFormat("en", { type: "disjunction" }).format(["a", "b"]), new Intl.ListFormat("en").format(["x"])]);
console.log("done");
