// FormData, which the OpenAI SDK references on every request with a body:
// entries, their order, and Blob values turned into Files, as node has them.
const fd = new FormData();
fd.append("a", "1");
fd.append("b", 2);
fd.append("a", "3\nline");
fd.append("file", new Blob(["hello"], { type: "text/plain" }));
fd.append("named", new Blob(["x"]), "n.bin");
fd.append("renamed", new File(["y"], "orig.txt", { type: "text/x", lastModified: 5 }), "new.txt");
fd.append("kept", new File(["z"], "kept.txt", { lastModified: 6 }));
const show = (v) => (typeof v === "string" ? v : { tag: Object.prototype.toString.call(v), name: v.name, type: v.type, size: v.size, lastModified: v.name === "blob" || v.name === "n.bin" ? "now" : v.lastModified });
const lines = [];
lines.push(JSON.stringify([...fd].map(([k, v]) => [k, show(v)])));
lines.push(JSON.stringify([fd.get("a"), fd.getAll("a"), fd.get("none"), fd.has("b"), fd.has("c")]));
fd.set("a", "only");
fd.delete("b");
lines.push(JSON.stringify([...fd.keys()]));
lines.push(JSON.stringify([...fd.values()].map(show)));
const seen = [];
fd.forEach((v, k, f) => seen.push([k, f === fd]));
lines.push(JSON.stringify(seen));
lines.push(Object.prototype.toString.call(fd));
for (const bad of [() => new FormData({}), () => fd.append("x", "y", "name.txt")]) {
  try {
    bad();
    lines.push("no error");
  } catch (e) {
    lines.push(e.name);
  }
}
lines.push(await new File([await fd.get("file").text(), "!"], "t").text());
console.log(lines.join("\n"));
console.log("done");
