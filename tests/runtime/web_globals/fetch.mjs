// fetch, Request, Response and Headers against the test's loopback server at __BASE__.
const base = "__BASE__";
const show = (x) => console.log(JSON.stringify(x));
const r = await fetch(base + "/text");
show([r.status, r.statusText, r.ok, r.url === base + "/text", r.headers.get("x-custom"), r.headers.get("content-type"), r.headers.has("X-CUSTOM"), r.bodyUsed, r.redirected, r.type]);
show([await r.text(), r.bodyUsed]);
try { await r.text(); show("read twice"); } catch (e) { show(["second read", e.name]); }
const j = await fetch(new URL("/json", base));
show([j.status, await j.json()]);
const ab = await (await fetch(base + "/json")).arrayBuffer();
show([ab instanceof ArrayBuffer, ab.byteLength]);
const req = new Request(base + "/echo", { method: "post", headers: new Headers({ "X-Token": "t1" }), body: JSON.stringify({ q: 1 }) });
show([req.method, req.url === base + "/echo", req.headers.get("content-type")]);
show(await (await fetch(req)).json());
const put = await fetch(base + "/echo", { method: "PUT", body: new URLSearchParams({ a: "1 2", b: "é" }), headers: [["x-token", "t2"]] });
show(await put.json());
show(await (await fetch(base + "/echo", { method: "PATCH", body: new Blob(["blob body"], { type: "text/x-blob" }) })).json());
const missing = await fetch(base + "/missing");
show([missing.status, missing.ok, missing.statusText, await missing.text()]);
const moved = await fetch(base + "/redirect");
show([moved.status, moved.redirected, moved.url === base + "/text", await moved.text()]);
const head = await fetch(base + "/text", { method: "HEAD" });
show([head.status, await head.text()]);

// Aborting: the promise rejects with the signal's reason.
const ac = new AbortController();
const slow = fetch(base + "/slow", { signal: ac.signal });
setTimeout(() => ac.abort(), 50);
try { await slow; show("not aborted"); } catch (e) { show([e.name, e instanceof DOMException, e.message]); }
try { await fetch(base + "/text", { signal: AbortSignal.abort("early") }); show("not aborted"); } catch (e) { show(["early", e]); }
const ac2 = new AbortController();
const slow2 = fetch(base + "/slow", { signal: ac2.signal });
ac2.abort(new Error("custom"));
try { await slow2; show("not aborted"); } catch (e) { show([e.name, e.message]); }

// Headers
const h = new Headers({ b: "2", A: "1" });
h.append("a", "3");
h.append("Set-Cookie", "x=1");
h.append("set-cookie", "y=2");
show([[...h], h.get("a"), h.get("set-cookie"), h.getSetCookie(), [...h.keys()], h.has("B"), h.get("nope")]);
h.set("a", " trimmed ");
h.delete("b");
show([...h.entries()]);
const seen = [];
h.forEach((v, k) => seen.push(`${k}=${v}`));
show(seen);
try { h.append("bad name", "x"); show("accepted"); } catch (e) { show(e.name); }
try { new Headers({ x: "a\nb" }); show("accepted"); } catch (e) { show(e.name); }

// Response and Request objects of the agent's own
const resp = new Response("body", { status: 202, statusText: "Accepted!", headers: { "X-A": "1" } });
show([resp.status, resp.statusText, resp.ok, resp.headers.get("content-type"), resp.headers.get("x-a"), await resp.clone().text(), await resp.text()]);
const rj = Response.json({ k: [1] }, { status: 200 });
show([rj.headers.get("content-type"), await rj.json()]);
show([Response.error().type, Response.error().status, Response.redirect("http://x.test/a", 301).headers.get("location")]);
try { new Response("", { status: 99 }); show("accepted"); } catch (e) { show(e.name); }
show([new Response(null).body, new Response(null).status, await new Response().text()]);
const fromBlob = await new Response(new Blob(["xyz"], { type: "a/b" })).blob();
show([fromBlob.size, fromBlob.type, new Uint8Array(await new Response(new Uint8Array([104, 105])).arrayBuffer()).length]);
const del = new Request("http://x.test/p?q", { method: "DELETE" });
show([del.method, del.url, del.redirect, del.signal instanceof AbortSignal, del.signal.aborted, del.clone().url]);
try { new Request("/relative"); show("accepted"); } catch (e) { show(e.name); }
try { new Request("http://x.test/", { method: "GET", body: "x" }); show("accepted"); } catch (e) { show(e.name); }
// Lone surrogates: URLs become well-formed, header values must be bytes.
show([new Request("http://x.test/\ud800?\udc00").url]);
try { new Headers({ "x-a": "\udc00" }); show("accepted"); } catch (e) { show(e.name); }
try { await fetch("not a url"); show("accepted"); } catch (e) { show(e.name); }
console.log("done");
