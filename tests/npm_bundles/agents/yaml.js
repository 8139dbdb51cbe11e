// yaml: parse, stringify and a document round trip with comments kept.
import YAML from "yaml";

const text = `# config
name: hugind   # trailing
version: 1.2
enabled: yes
list:
  - a
  - { b: 2, c: [3, 4] }
anchors:
  base: &base { x: 1, y: 2 }
  derived:
    <<: *base
    y: 3
multi: |
  line one
  line two
folded: >
  folded
  text
date: 2024-02-29
empty: ~
quoted: "tab\\there"
`;
const value = YAML.parse(text, { merge: true });
const doc = YAML.parseDocument(text);
doc.set("added", [1, "two", { three: 3 }]);
let error = null;
try {
  YAML.parse("a: [1, 2\nb: }");
} catch (e) {
  error = { name: e.name, code: e.code, message: e.message };
}
console.log(JSON.stringify(value, null, 1));
console.log(YAML.stringify({ s: "x: y", n: null, nested: { arr: [1, [2, 3]], long: "word ".repeat(30) }, t: true }));
console.log(doc.toString());
console.log(JSON.stringify(error));
