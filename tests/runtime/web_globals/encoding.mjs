// TextDecoder: streaming, replacement of bad sequences, BOM, fatal; atob/btoa.
const enc = new TextEncoder();
const dec = new TextDecoder();
const bytes = enc.encode("h€llo 😀!");
let out = "";
for (const b of bytes) out += dec.decode(new Uint8Array([b]), { stream: true });
out += dec.decode();
console.log(out, JSON.stringify(new TextDecoder().decode(new Uint8Array([0xe2, 0x82, 0x41, 0xf0, 0x9f, 0x98, 0xff, 0xc0, 0x80]))));
console.log(JSON.stringify(new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]))), JSON.stringify(new TextDecoder("utf-8", { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x41]))));
try { new TextDecoder("utf-8", { fatal: true }).decode(new Uint8Array([0xff])); } catch (e) { console.log(e.name); }
const d2 = new TextDecoder("utf-8", { fatal: true });
console.log(d2.fatal, d2.ignoreBOM, d2.encoding, JSON.stringify(d2.decode(new Uint8Array([0xe2, 0x82]), { stream: true })), d2.decode(new Uint8Array([0xac])));
console.log(btoa("hello"), atob("aGVsbG8="));
const chunks = [[0xf0], [0x9f, 0x98], [0x80, 0x41], [0xe2], [0x82], [0xac], [0xc3]];
const sd = new TextDecoder();
console.log(JSON.stringify(chunks.map((c) => sd.decode(new Uint8Array(c), { stream: true })).join("|") + "|" + sd.decode()));
const bom = new TextDecoder();
console.log(JSON.stringify([bom.decode(new Uint8Array([0xef, 0xbb]), { stream: true }), bom.decode(new Uint8Array([0xbf, 0x41, 0xef, 0xbb, 0xbf]), { stream: true }), bom.decode()]));
console.log(JSON.stringify(new TextDecoder().decode(new Uint8Array([0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80, 0xe0, 0x80, 0xaf]))));
const into = new Uint8Array(5);
console.log(JSON.stringify(new TextEncoder().encodeInto("aé😀", into)), Array.from(into).join());
console.log("done");
