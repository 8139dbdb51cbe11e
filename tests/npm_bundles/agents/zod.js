// zod: schemas parsed, coerced and rejected; the errors' JSON is compared.
import { z } from "zod";

const User = z.object({
  name: z.string().min(2).max(20),
  email: z.email(),
  age: z.number().int().nonnegative().optional(),
  tags: z.array(z.enum(["admin", "dev", "ops"])).default([]),
  id: z.uuid(),
  site: z.url().optional(),
  joined: z.coerce.date(),
});
const inputs = [
  { name: "Ada", email: "ada@example.org", id: "6ba7b810-9dad-41d1-80b4-00c04fd430c8", joined: "2024-02-29T12:00:00Z" },
  { name: "A", email: "nope", age: -1.5, tags: ["root"], id: "x", site: "not a url", joined: "never" },
  "just a string",
  { name: "Bob", email: "bob@example.org", id: "6ba7b810-9dad-41d1-80b4-00c04fd430c8", joined: 0, extra: true },
];
const results = inputs.map((input) => {
  const r = User.safeParse(input);
  return r.success ? { ok: r.data } : { issues: r.error.issues, pretty: z.prettifyError(r.error) };
});
const Shape = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("circle"), r: z.number().positive() }),
  z.object({ kind: z.literal("rect"), w: z.number(), h: z.number() }),
]);
const Str = z.string().transform((s) => s.trim().toUpperCase()).pipe(z.string().regex(/^[A-Z]+$/));
let thrown = null;
try {
  Shape.parse({ kind: "triangle" });
} catch (e) {
  thrown = { name: e.name, issues: e.issues };
}
const out = {
  results,
  shapes: [{ kind: "circle", r: 2 }, { kind: "rect", w: 1, h: "2" }].map((s) => Shape.safeParse(s).success),
  transformed: [" abc ", "a1"].map((s) => Str.safeParse(s)),
  thrown,
  jsonSchema: z.toJSONSchema(User.omit({ joined: true })),
};
console.log(JSON.stringify(out, null, 1));
