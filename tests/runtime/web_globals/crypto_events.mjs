const hex = (buf) => Array.from(new Uint8Array(buf), (b) => b.toString(16).padStart(2, "0")).join("");
const enc = new TextEncoder();
for (const alg of ["SHA-1", "SHA-256", "SHA-384", "SHA-512"]) {
  for (const s of ["", "abc", "a".repeat(55), "a".repeat(56), "a".repeat(64), "a".repeat(111), "a".repeat(112), "a".repeat(1000)]) {
    console.log(alg, s.length, hex(await crypto.subtle.digest(alg, enc.encode(s))));
  }
}
const u = crypto.randomUUID();
console.log(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u), u !== crypto.randomUUID());
const a = crypto.getRandomValues(new Uint32Array(8));
console.log(a.length, new Set(a).size > 1);
try { crypto.getRandomValues(new Float32Array(2)); } catch (e) { console.log(e.name); }
try { crypto.getRandomValues(new Uint8Array(65537)); } catch (e) { console.log(e.name); }
const t = new EventTarget();
const order = [];
t.addEventListener("x", (e) => order.push("a" + e.type));
t.addEventListener("x", { handleEvent: (e) => order.push("b" + (e.target === t)) }, { once: true });
t.addEventListener("x", (e) => { order.push("c"); e.stopImmediatePropagation(); });
t.addEventListener("x", () => order.push("d"));
t.dispatchEvent(new Event("x"));
t.dispatchEvent(new Event("x"));
console.log(order.join(","));
const ev = new Event("y", { cancelable: true });
t.addEventListener("y", (e) => e.preventDefault());
console.log(t.dispatchEvent(ev), ev.defaultPrevented, ev.eventPhase, ev.target === t);
const ce = new CustomEvent("z", { detail: { k: 1 } });
console.log(ce.detail.k, ce instanceof Event);
const ac = new AbortController();
ac.signal.onabort = (e) => console.log("onabort", e.type);
ac.signal.addEventListener("abort", () => console.log("listener", ac.signal.reason.name, ac.signal.reason.message));
ac.abort();
ac.abort("again");
console.log(ac.signal.aborted, ac.signal.reason instanceof DOMException, ac.signal.reason.code);
const s2 = AbortSignal.abort("why");
console.log(s2.aborted, s2.reason);
try { s2.throwIfAborted(); } catch (e) { console.log("thrown", e); }
const ts = AbortSignal.timeout(10);
await new Promise((r) => { const keep = setTimeout(() => {}, 1000); ts.addEventListener("abort", () => { clearTimeout(keep); r(); }); });
console.log(ts.reason.name, ts.reason.message, ts.reason.code);
const c1 = new AbortController(), c2 = new AbortController();
const any = AbortSignal.any([c1.signal, c2.signal]);
c2.abort("second");
console.log(any.aborted, any.reason);
let n = 0;
await new Promise((resolve) => { const id = setInterval((x) => { n += x; if (n >= 3) { clearInterval(id); resolve(); } }, 5, 1); });
console.log("interval", n);
const cleared = setTimeout(() => console.log("never"), 1);
clearTimeout(cleared);
await new Promise((r) => setTimeout(r, 20));
queueMicrotask(() => console.log("micro"));
await null;
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
console.log("done");
