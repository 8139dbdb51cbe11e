// multipart/form-data bodies read back by formData(): well-formed ones, files
// with binary bytes, UTF-8 names, a quoted boundary, and the malformed ones
// (no boundary, no closing delimiter, not form-data, no name) that reject.
const show = (x) => console.log(JSON.stringify(x));
async function parse(body, type) {
  try {
    const f = await new Response(body, { headers: { "content-type": type } }).formData();
    const out = [];
    for (const [k, v] of f) {
      if (typeof v === "string") out.push([k, v]);
      else out.push([k, v.name, v.type, [...new Uint8Array(await v.arrayBuffer())]]);
    }
    return out;
  } catch (e) {
    return e.name;
  }
}
const B = "XyZ";
const T = `multipart/form-data; boundary=${B}`;
const cases = [
  [`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--${B}--\r\n`, T],
  [`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nline1\r\nline2\r\n--${B}\r\nContent-Disposition: form-data; name="b"\r\n\r\n\r\n--${B}--`, T],
  [`--${B}\r\nContent-Disposition: form-data; name="f"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n\u00ff\u0000x\r\n--${B}--\r\n`, T],
  [`--${B}\r\nContent-Disposition: form-data; name="f"; filename="n.txt"\r\n\r\nhi\r\n--${B}--\r\n`, T],
  [`--${B}\r\nContent-Disposition: form-data; name="caf\u00e9"\r\n\r\nd\u00e9j\u00e0\r\n--${B}--\r\n`, T],
  [`--${B}\r\nContent-Disposition: form-data; name="q"\r\n\r\nx\r\n--${B}--\r\n`, `multipart/form-data; boundary="${B}"`],
  [`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx\r\n--${B}--\r\n`, "multipart/form-data"],
  [`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nx`, T],
  [`--${B}\r\nContent-Disposition: attachment; name="a"\r\n\r\nx\r\n--${B}--\r\n`, T],
  [`--${B}\r\nContent-Disposition: form-data\r\n\r\nx\r\n--${B}--\r\n`, T],
  [`nope`, T],
  [`--${B}--\r\n`, T],
];
for (const [body, type] of cases) show(await parse(body, type));
// What hugind's own FormData serialization makes, parsed back.
const f = new FormData();
f.append("t", "v\nw");
f.append("file", new Blob([new Uint8Array([0, 200, 255])], { type: "image/png" }), "p q.png");
const r = new Response(f);
const back = await r.formData();
show([...back].map(([k, v]) => (typeof v === "string" ? [k, v] : [k, v.name, v.type, v.size])));
console.log("done");
