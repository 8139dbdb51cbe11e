// fetch posting a FormData: the multipart body as the server received it,
// with the boundary (random on both sides) replaced. ECHO_URL is set at bundle time.
const fd = new FormData();
fd.append("text", "two\nlines \"quoted\"");
fd.append("na\"me", "ü");
fd.append("file", new File(["file body"], "a\nb.txt", { type: "text/plain" }));
fd.append("blob", new Blob(["raw"]));
const r = await fetch(ECHO_URL, { method: "POST", body: fd });
const { contentType, body } = await r.json();
const boundary = contentType.split("boundary=")[1];
console.log(contentType.replace(boundary, "BOUNDARY"));
console.log(JSON.stringify(body.split(boundary).join("BOUNDARY")));
