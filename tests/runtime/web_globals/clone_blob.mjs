// structuredClone and Blob/File.
const show = (x) => console.log(JSON.stringify(x));
const shared = { n: 1 };
const src = {
  num: 1.5, str: "s", bool: true, nul: null, undef: undefined, big: 10n, date: new Date(Date.UTC(2020, 1, 3)),
  re: /a+b/gi, map: new Map([["k", shared], [1, [2, 3]]]), set: new Set([1, "x", shared]), arr: [1, , 3],
  nested: { deep: { deeper: [shared, shared] } }, u8: new Uint8Array([1, 2, 3]), f64: new Float64Array([0.5, -1]),
  buf: new Uint8Array([9, 8, 7]).buffer, err: new RangeError("bad"), boxed: new String("box"),
};
src.self = src;
const c = structuredClone(src);
show([c !== src, c.self === c, c.num, c.str, c.bool, c.nul, "undef" in c, c.undef, typeof c.big, c.big === 10n]);
show([c.date instanceof Date, c.date.toISOString(), c.date !== src.date, c.re instanceof RegExp, c.re.source, c.re.flags]);
show([c.map instanceof Map, c.map.get("k") === c.set.has(c.map.get("k")) , c.map.get("k") === c.nested.deep.deeper[0], c.map.get("k") !== shared, [...c.map.get(1)]]);
show([c.arr.length, 1 in c.arr, Array.from(c.u8), c.u8 instanceof Uint8Array, Array.from(c.f64), new Uint8Array(c.buf)[0], c.buf instanceof ArrayBuffer]);
show([c.err instanceof RangeError, c.err.name, c.err.message, typeof c.boxed, String(c.boxed)]);
class Point { constructor() { this.x = 1; } get y() { return 2; } }
const p = structuredClone(new Point());
show([p instanceof Point, Object.getPrototypeOf(p) === Object.prototype, p.x, p.y]);
for (const bad of [() => 1, Symbol("s"), { f() {} }, new WeakMap(), Promise.resolve()]) {
  try { structuredClone(bad); show("cloned?"); } catch (e) { show([e.name, e instanceof DOMException, e.code]); }
}
show([structuredClone(5), structuredClone("x"), structuredClone(null), structuredClone([1, [2]])]);
const u8 = new Uint8Array([0, 1, 2, 3, 4, 5, 6, 7]);
const view = new Uint8Array(u8.buffer, 2, 4);
const vc = structuredClone(view);
show([Array.from(vc), vc.byteOffset, vc.buffer.byteLength]);
const blob = new Blob(["héllo ", new Uint8Array([119, 111]), new Blob(["rld"])], { type: "Text/Plain" });
show([blob.size, blob.type, await blob.text(), new Uint8Array(await blob.arrayBuffer()).length]);
const part = blob.slice(1, -2, "x/y");
show([part.size, part.type, await part.text(), await blob.slice(-3).text(), await blob.slice(5, 2).text(), (await blob.slice(0, 1).bytes?.())?.length ?? 1]);
const bc = structuredClone(blob);
show([bc instanceof Blob, bc.size, bc.type, await bc.text()]);
const file = new File(["abc"], "a.txt", { type: "text/plain", lastModified: 42 });
show([file instanceof Blob, file.name, file.lastModified, file.size, await file.text(), Object.prototype.toString.call(file)]);
show([new Blob().size, new Blob([]).type, new Blob(["a"], { type: "bad\u00e9" }).type]);
console.log("done");
