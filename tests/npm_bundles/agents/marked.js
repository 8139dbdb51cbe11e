// marked: markdown to HTML (GFM tables, lists, code, links, escaping).
import { Marked, marked } from "marked";

const doc = `# Title with *emphasis*

Some **bold**, \`code\`, a [link](https://example.org "t") and <b>html</b> & "quotes".

- one
- two
  1. nested
  2. list

> quoted
> text

| a | b |
|:--|--:|
| 1 | 2 |

\`\`\`js
const x = 1 < 2;
\`\`\`

~~struck~~ https://autolink.example.org

Line with trailing spaces  
next line.

---
`;
const custom = new Marked({
  renderer: {
    heading({ tokens, depth }) {
      return `<h${depth} class="x">${this.parser.parseInline(tokens)}</h${depth}>\n`;
    },
  },
});
console.log(marked.parse(doc));
console.log(marked.parseInline("*a* _b_ **c** `d` <e>"));
console.log(custom.parse("## Custom *heading*"));
console.log(JSON.stringify(marked.lexer("- a\n- b\n\ntext").map((t) => [t.type, t.raw])));
