// ReadableStream and Response.body against the test's loopback server at __BASE__.
const base = "__BASE__";
const show = (x) => console.log(JSON.stringify(x));
const log = [];
const tick = async (n = 5) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};
const bytes = (u8) => Array.from(u8);

// start/pull/enqueue/close ordering, desiredSize and the queue.
let ctl;
const s1 = new ReadableStream(
  {
    start(c) {
      ctl = c;
      log.push(["start", c.desiredSize]);
      c.enqueue("a");
      log.push(["after a", c.desiredSize]);
    },
    pull(c) {
      log.push(["pull", c.desiredSize]);
    },
  },
  { highWaterMark: 2 },
);
log.push(["constructed", s1.locked]);
await tick();
ctl.enqueue("b");
log.push(["after b", ctl.desiredSize]);
await tick();
const r1 = s1.getReader();
log.push(["locked", s1.locked, r1 instanceof ReadableStreamDefaultReader]);
log.push(["read", await r1.read()]);
await tick();
log.push(["desired", ctl.desiredSize]);
ctl.close();
try { ctl.enqueue("late"); } catch (e) { log.push(["enqueue after close", e.name]); }
try { ctl.close(); } catch (e) { log.push(["close twice", e.name]); }
log.push(["read", await r1.read()], ["read", await r1.read()], ["read", await r1.read()]);
log.push(["closed", await r1.closed, ctl.desiredSize]);
show(log.splice(0));

// Pending reads are answered in order by later enqueues and by close.
let c2;
const s2 = new ReadableStream({ start: (c) => void (c2 = c) }, { highWaterMark: 0 });
const r2 = s2.getReader();
const pending = [r2.read(), r2.read(), r2.read()];
c2.enqueue(1);
c2.enqueue(2);
c2.close();
show(await Promise.all(pending));

// error(): reads and closed reject with the stored error; the queue is dropped.
let c3;
const s3 = new ReadableStream({ start: (c) => void (c3 = c) });
c3.enqueue("x");
c3.error(new RangeError("boom"));
c3.error(new Error("ignored"));
try { c3.enqueue("y"); } catch (e) { log.push(["enqueue after error", e.name]); }
const r3 = s3.getReader();
try { await r3.read(); } catch (e) { log.push(["read", e.name, e.message]); }
try { await r3.closed; } catch (e) { log.push(["closed", e.message, c3.desiredSize]); }
// A throwing start throws from the constructor; a rejecting start or pull errors the stream.
try { new ReadableStream({ start() { throw new TypeError("bad start"); } }); } catch (e) { log.push(["start threw", e.message]); }
const s4 = new ReadableStream({ start: () => Promise.reject(new TypeError("late start")) });
try { await s4.getReader().read(); } catch (e) { log.push(["start rejected", e.message]); }
const s5 = new ReadableStream({ pull: () => Promise.reject(new Error("bad pull")) });
try { await s5.getReader().read(); } catch (e) { log.push(["pull rejected", e.message]); }
show(log.splice(0));

// Reader semantics: one reader at a time, releaseLock, cancel.
const s6 = new ReadableStream({
  start(c) {
    c.enqueue("first");
  },
  cancel(reason) {
    log.push(["source cancel", reason]);
    return new Promise((resolve) => setTimeout(resolve, 5));
  },
});
const r6 = s6.getReader();
try { s6.getReader(); } catch (e) { log.push(["second reader", e.name]); }
try { await s6.cancel("no"); } catch (e) { log.push(["cancel locked", e.name]); }
const waiting = r6.read();
log.push(["waiting", await waiting]);
const stuck = r6.read();
r6.releaseLock();
try { await stuck; } catch (e) { log.push(["released read", e.name]); }
try { await r6.closed; } catch (e) { log.push(["released closed", e.name]); }
try { await r6.read(); } catch (e) { log.push(["read released", e.name]); }
r6.releaseLock();
log.push(["unlocked", s6.locked]);
const r6b = s6.getReader();
log.push(["cancelled", await r6b.cancel("enough")]);
log.push(["after cancel", await r6b.read(), await r6b.closed]);
try { s6.getReader({ mode: "wrong" }); } catch (e) { log.push(["bad mode", e.name]); }
try { new ReadableStream({ pull: 5 }); } catch (e) { log.push(["bad pull", e.name]); }
try { new ReadableStream({}, { highWaterMark: -1 }); } catch (e) { log.push(["bad hwm", e.name]); }
try { new ReadableStream({ type: "other" }); } catch (e) { log.push(["bad type", e.name]); }
show(log.splice(0));

// A size strategy: desiredSize counts bytes.
let c7;
new ReadableStream({ start: (c) => void (c7 = c) }, new ByteLengthQueuingStrategy({ highWaterMark: 10 }));
c7.enqueue(new Uint8Array(4));
c7.enqueue(new Uint8Array(3));
show([c7.desiredSize, new CountQueuingStrategy({ highWaterMark: 3 }).highWaterMark]);

// pull with highWaterMark 0 is called once per read.
let n = 0;
const counter = new ReadableStream(
  {
    pull(c) {
      n += 1;
      log.push(["pull", n]);
      if (n > 3) c.close();
      else c.enqueue(n * 10);
    },
  },
  { highWaterMark: 0 },
);
await tick();
log.push(["before reading", n]);
for await (const v of counter) log.push(["value", v]);
log.push(["after", counter.locked]);
show(log.splice(0));

// Async iteration: break cancels the stream unless preventCancel.
const make = (name) =>
  new ReadableStream({
    start(c) {
      for (const v of [1, 2, 3]) c.enqueue(v);
    },
    cancel(reason) {
      log.push([name, "cancel", String(reason)]);
    },
  });
const s8 = make("s8");
for await (const v of s8) {
  log.push(["s8", v]);
  if (v === 2) break;
}
log.push(["s8 locked", s8.locked]);
const s9 = make("s9");
for await (const v of s9.values({ preventCancel: true })) {
  log.push(["s9", v]);
  break;
}
const r9 = s9.getReader();
log.push(["s9 rest", await r9.read(), s9.locked]);
const it = make("s10").values();
log.push(["iterator", Object.prototype.toString.call(it), typeof it[Symbol.asyncIterator]]);
log.push([await it.next(), await it.return("stop"), await it.next()]);
const errs = new ReadableStream({ start: (c) => (c.enqueue(1), c.error(new Error("mid"))) });
try {
  for await (const v of errs) log.push(["errs", v]);
} catch (e) {
  log.push(["errs threw", e.message]);
}
show(log.splice(0));

// tee(): both branches see every chunk; the source is cancelled when both are.
const src = new ReadableStream({
  start(c) {
    c.enqueue("t1");
    c.enqueue("t2");
    c.close();
  },
});
const [left, right] = src.tee();
log.push(["src locked", src.locked]);
const all = async (s) => {
  const out = [];
  for await (const v of s) out.push(v);
  return out;
};
log.push(["left", await all(left)], ["right", await all(right)]);
const src2 = new ReadableStream({
  start(c) {
    c.enqueue("u");
  },
  cancel(reason) {
    log.push(["src2 cancel", reason]);
  },
});
const [a2, b2] = src2.tee();
// One branch's cancel settles only once the other branch is cancelled too.
const cancelA = a2.cancel("ra");
const rb2 = b2.getReader();
log.push(["one cancelled", (await rb2.read()).value]);
rb2.cancel("rb");
log.push(["both cancelled", await cancelA]);
const src3 = new ReadableStream({ start: (c) => c.error(new Error("tee error")) });
const [a3, b3] = src3.tee();
for (const b of [a3, b3]) {
  try { await b.getReader().read(); } catch (e) { log.push(["branch", e.message]); }
}
show(log.splice(0));

// ReadableStream.from
show(await all(ReadableStream.from([1, Promise.resolve(2), 3])));
async function* gen() {
  yield "g1";
  yield "g2";
}
show(await all(ReadableStream.from(gen())));
try { ReadableStream.from(5); } catch (e) { show(["from 5", e.name]); }

// Response.body: a stream of the body's bytes; reading it uses the body.
const resp = new Response("héllo");
show([resp.body instanceof ReadableStream, resp.body === resp.body, resp.bodyUsed, resp.body.locked]);
const rr = resp.body.getReader();
try { await resp.text(); } catch (e) { show(["text while locked", e.name, resp.bodyUsed]); }
const { value, done } = await rr.read();
show([value instanceof Uint8Array, bytes(value), done, resp.bodyUsed, await rr.read()]);
try { await resp.text(); } catch (e) { show(["text after reading", e.name]); }
show([new Response(null).body, new Response().bodyUsed]);
const read = new Response("abc");
show([await read.text(), read.bodyUsed, read.body.locked]);
const fromStream = new Response(ReadableStream.from([new TextEncoder().encode("str"), new TextEncoder().encode("eam")]));
const copy = fromStream.clone();
show([await fromStream.text(), await copy.text(), fromStream.headers.get("content-type"), fromStream.bodyUsed]);
const bad = new Response(ReadableStream.from(["not bytes"]));
try { await bad.text(); } catch (e) { show(["string chunk", e.name]); }
const usedStream = ReadableStream.from(["x"]);
usedStream.getReader();
try { new Response(usedStream); } catch (e) { show(["locked stream", e.name]); }

// A fetched body, read as a stream and as text.
const fetched = await fetch(base + "/text");
const chunks = [];
for await (const chunk of fetched.body) chunks.push(...chunk);
show([new TextDecoder().decode(new Uint8Array(chunks)), fetched.bodyUsed]);
try { await fetched.text(); } catch (e) { show(["fetched twice", e.name]); }
const viaText = await fetch(base + "/json");
show([await viaText.json(), viaText.bodyUsed, viaText.body instanceof ReadableStream]);
const head = await fetch(base + "/text", { method: "HEAD" });
show([head.body, await head.text()]);
const streamed = await fetch(base + "/json");
const t1 = streamed.clone();
show([await new Response(streamed.body).json(), await t1.text()]);
console.log("done");
