// nanoid draws from crypto.getRandomValues: the ids differ per run, so only
// their length, alphabet and spread are printed; a fixed "random" source
// makes customRandom's output exact.
import { customAlphabet, customRandom, nanoid, urlAlphabet } from "nanoid";

const ids = Array.from({ length: 200 }, () => nanoid());
const hex = customAlphabet("0123456789abcdef", 12);
const hexIds = Array.from({ length: 100 }, () => hex());
let seed = 7;
const fixed = customRandom("abcdefghijklmnopqrstuvwxyz", 16, (size) => {
  const bytes = new Uint8Array(size);
  for (let i = 0; i < size; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    bytes[i] = seed >>> 23;
  }
  return bytes;
});
const out = {
  alphabet: urlAlphabet,
  lengths: [...new Set(ids.map((id) => id.length))],
  inAlphabet: ids.every((id) => [...id].every((c) => urlAlphabet.includes(c))),
  distinct: new Set(ids).size,
  sized: [1, 5, 64].map((n) => nanoid(n).length),
  hex: hexIds.every((id) => /^[0-9a-f]{12}$/.test(id)),
  fixed: [fixed(), fixed(), fixed()],
};
console.log(JSON.stringify(out, null, 1));
