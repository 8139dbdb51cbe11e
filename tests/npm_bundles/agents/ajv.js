// ajv compiles each schema to JS source and evaluates it with new Function:
// the engine must allow that, and the compiled validators must agree with node.
import Ajv from "ajv";

const ajv = new Ajv({ allErrors: true, useDefaults: true, coerceTypes: false });
ajv.addFormat("slug", /^[a-z0-9-]+$/);
const schema = {
  $id: "https://example.org/order.json",
  type: "object",
  required: ["id", "items"],
  additionalProperties: false,
  properties: {
    id: { type: "string", format: "slug" },
    priority: { enum: ["low", "high"], default: "low" },
    items: {
      type: "array",
      minItems: 1,
      uniqueItems: true,
      items: {
        type: "object",
        required: ["sku", "qty"],
        properties: { sku: { type: "string", pattern: "^[A-Z]{3}-\\d+$" }, qty: { type: "integer", minimum: 1, maximum: 99 } },
      },
    },
    note: { oneOf: [{ type: "string", maxLength: 10 }, { type: "null" }] },
    ref: { $ref: "#/$defs/positive" },
  },
  $defs: { positive: { type: "number", exclusiveMinimum: 0 } },
};
const validate = ajv.compile(schema);
const docs = [
  { id: "order-1", items: [{ sku: "ABC-1", qty: 2 }], note: null, ref: 3 },
  { id: "Order 1", items: [], extra: 1 },
  { id: "o", items: [{ sku: "abc", qty: 0 }, { sku: "abc", qty: 0 }], note: "far too long a note", ref: 0 },
  { items: "none" },
];
const out = docs.map((doc) => {
  const ok = validate(doc);
  return { ok, doc, errors: validate.errors, text: ok ? null : ajv.errorsText(validate.errors) };
});
console.log(JSON.stringify({ out, sourceChars: validate.toString().length > 100 }, null, 1));
