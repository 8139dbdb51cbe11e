// crypto: digests of known inputs (every padding boundary), the shape of random values.
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
const many = new Set(Array.from({ length: 200 }, () => crypto.randomUUID()));
console.log(many.size, [...many].every((x) => x[14] === "4" && "89ab".includes(x[19])));
const big = crypto.getRandomValues(new Uint8Array(65536));
console.log(big.length, new Set(big).size > 200, crypto.getRandomValues(new BigUint64Array(2)).length);
const view = new Uint8Array(await crypto.subtle.digest({ name: "sha-256" }, new Uint8Array([97, 98, 99, 100]).subarray(0, 3)));
console.log(hex(view.buffer));
try { await crypto.subtle.digest("MD5", enc.encode("x")); } catch (e) { console.log(e.name); }
console.log("done");
