// uuid: name-based ids (v3/v5) are fixed by their inputs; random ones (v4,
// v7) are checked by shape only, so node and hugind print the same lines.
import { NIL, MAX, parse, stringify, v1, v3, v4, v5, v7, validate, version } from "uuid";

const names = ["hugind", "agent", "", "ünïcödé", "a".repeat(300)];
const out = {
  nil: NIL,
  max: MAX,
  v5dns: names.map((n) => v5(n, v5.DNS)),
  v5url: names.map((n) => v5(n, v5.URL)),
  v3dns: names.map((n) => v3(n, v3.DNS)),
  roundTrip: stringify(parse("6ba7b810-9dad-11d1-80b4-00c04fd430c8")),
  bytes: Array.from(parse(v5("bytes", v5.URL))),
  validate: ["", "nope", NIL, MAX, "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6BA7B810-9DAD-11D1-80B4-00C04FD430C8"].map(validate),
  versions: [v1(), v3("x", v3.DNS), v4(), v5("x", v5.DNS), v7()].map(version),
  v4shape: Array.from({ length: 50 }, () => v4()).every((u) => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u)),
  v4distinct: new Set(Array.from({ length: 50 }, () => v4())).size,
  v7sorted: (() => {
    const ids = Array.from({ length: 20 }, () => v7());
    return ids.every((id, i) => i === 0 || ids[i - 1] < id);
  })(),
  seeded: v4({ random: Uint8Array.from({ length: 16 }, (_, i) => i * 17) }),
};
console.log(JSON.stringify(out, null, 1));
