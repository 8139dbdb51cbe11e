// The last part of the Request/Response suite (after wpt_request_response.mjs
// and wpt_request_response_body.mjs, in the same script): a Response's body as
// a stream, and bodies copied at construction. The cases WPT runs on a fetched
// body (body source "fetch") or with a BYOB reader (hugind has no byte
// streams) are left out. Then every case of the suite runs.
const BODY = DATA.disturbed_body;
function responseFrom(source) {
  if (source === "stream") {
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new TextEncoder().encode(BODY));
        c.close();
      },
    });
    return new Response(stream);
  }
  return new Response(BODY);
}
const SOURCES = ["stream", "string"];
const CONSUMERS = ["blob", "text", "json", "arrayBuffer"];
function perSource(file, describe, check) {
  const checks = {};
  for (const source of SOURCES) for (const m of CONSUMERS) checks[describe(m, source)] = () => check(responseFrom(source), m);
  return checks;
}
const consumedOk = {
  blob: (v) => yes(v instanceof Blob),
  text: (v) => yes(v.length > 0),
  json: (v) => eq(typeof v, "object"),
  arrayBuffer: (v) => yes(v.byteLength > 0),
};

async function streamText(reader, partial) {
  const text = await readText(reader);
  if (partial) yes(text.includes(partial));
  else eq(text, partial === undefined ? text : partial);
  return text;
}
const bodyOf = {
  blob: () => new Blob([textData], { type: "text/plain" }),
  text: () => textData,
  URLSearchParams: () => new URLSearchParams("name=value"),
  "array buffer": () => {
    const buffer = new ArrayBuffer(textData.length);
    const view = new Int8Array(buffer);
    for (let i = 0; i < textData.length; i++) view[i] = textData.charCodeAt(i);
    return buffer;
  },
};
const expectedOf = { blob: textData, text: textData, URLSearchParams: "name=value", "array buffer": textData };

function erroring(where) {
  const err = new Error(`${where} error`);
  const source = where === "start" ? { start: (c) => c.error(err) } : { pull: (c) => c.error(err) };
  return [new ReadableStream(source), err];
}
async function rejectsWith(err, promise) {
  try {
    await promise;
  } catch (e) {
    if (e !== err) fail("rejected with another reason");
    return;
  }
  fail("did not reject");
}

Object.assign(CHECKS, {
  "response-consume-stream": {
    "Read empty text response's body as readableStream": async () => eq(await readText(new Response("").body.getReader()), ""),
    "Read empty blob response's body as readableStream": async () =>
      eq(await readText(new Response(new Blob([], { type: "text/plain" })).body.getReader()), ""),
    ...Object.fromEntries(
      Object.keys(bodyOf).map((kind) => [
        `Read ${kind} response's body as readableStream with mode=undefined`,
        async () => eq(await readText(new Response(bodyOf[kind]()).body.getReader({ mode: undefined })), expectedOf[kind]),
      ]),
    ),
    "Read form data response's body as readableStream with mode=undefined": async () => {
      const f = new FormData();
      f.append("name", "value");
      await streamText(new Response(f).body.getReader({ mode: undefined }), 'Content-Disposition: form-data; name="name"\r\n\r\nvalue');
    },
    "Getting an error Response stream": () => eq(Response.error().body, null),
    "Getting a redirect Response stream": () => eq(Response.redirect(rel("/")).body, null),
  },
  "response-stream-disturbed-1": perSource(
    1,
    (m, s) => `Getting ${m} after getting the Response body - not disturbed, not locked (body source: ${s})`,
    async (r, m) => {
      r.body.getReader().releaseLock();
      consumedOk[m](await r[m]());
    },
  ),
  "response-stream-disturbed-2": perSource(
    2,
    (m, s) => `Getting ${m} after getting a locked Response body (body source: ${s})`,
    (r, m) => {
      r.body.getReader();
      return rejectsJs(TypeError, r[m]());
    },
  ),
  "response-stream-disturbed-3": perSource(
    3,
    (m, s) => `Getting ${m} after reading the Response body (body source: ${s})`,
    (r, m) => {
      r.body.getReader().read();
      return rejectsJs(TypeError, r[m]());
    },
  ),
  "response-stream-disturbed-4": perSource(
    4,
    (m, s) => `Getting ${m} after cancelling the Response body (body source: ${s})`,
    (r, m) => {
      r.body.cancel();
      return rejectsJs(TypeError, r[m]());
    },
  ),
  "response-stream-disturbed-5": perSource(
    5,
    (m, s) => `Getting a body reader after consuming as ${m} (body source: ${s})`,
    (r, m) => {
      r[m]();
      if (r.body === null) fail("null body");
      throwsJs(TypeError, () => r.body.getReader());
    },
  ),
  "response-stream-disturbed-6": {
    "A non-closed stream on which read() has been called": () => {
      const stream = new ReadableStream();
      const r = new Response(stream);
      no(r.bodyUsed);
      const reader = stream.getReader();
      no(r.bodyUsed);
      reader.read();
      yes(r.bodyUsed);
    },
    "A non-closed stream on which cancel() has been called": () => {
      const stream = new ReadableStream();
      const r = new Response(stream);
      no(r.bodyUsed);
      const reader = stream.getReader();
      no(r.bodyUsed);
      reader.cancel();
      yes(r.bodyUsed);
    },
    "A closed stream on which read() has been called": () => {
      const stream = new ReadableStream({ start: (c) => c.close() });
      const r = new Response(stream);
      no(r.bodyUsed);
      const reader = stream.getReader();
      no(r.bodyUsed);
      reader.read();
      yes(r.bodyUsed);
    },
    "An errored stream on which read() has been called": () => {
      const stream = new ReadableStream({ start: (c) => c.error(new Error("some error")) });
      const r = new Response(stream);
      no(r.bodyUsed);
      const reader = stream.getReader();
      no(r.bodyUsed);
      reader.read().then(
        () => {},
        () => {},
      );
      yes(r.bodyUsed);
    },
    "An errored stream on which cancel() has been called": () => {
      const stream = new ReadableStream({ start: (c) => c.error(new Error("some error")) });
      const r = new Response(stream);
      no(r.bodyUsed);
      const reader = stream.getReader();
      no(r.bodyUsed);
      reader.cancel().then(
        () => {},
        () => {},
      );
      yes(r.bodyUsed);
    },
  },
  "response-error-from-stream": {
    "ReadableStreamDefaultReader Promise receives ReadableStream start() Error": () => {
      const [stream, err] = erroring("start");
      return rejectsWith(err, stream.getReader().read());
    },
    "ReadableStreamDefaultReader Promise receives ReadableStream pull() Error": () => {
      const [stream, err] = erroring("pull");
      return rejectsWith(err, stream.getReader().read());
    },
    ...Object.fromEntries(
      ["start", "pull"].flatMap((where) =>
        ["arrayBuffer", "blob", "bytes", "formData", "json", "text"].map((m) => {
          // WPT makes each stream when the file loads.
          const [stream, err] = erroring(where);
          return [`ReadableStream ${where}() Error propagates to Response.${m}() Promise`, () => rejectsWith(err, new Response(stream)[m]())];
        }),
      ),
    ),
  },
  "response-cancel-stream": {
    "Cancelling a starting blob Response stream": () => new Response(new Blob([], { type: "text/plain" })).body.cancel(),
    "Cancelling a loading blob Response stream": () => {
      const reader = new Response(new Blob(["This is data"], { type: "text/plain" })).body.getReader();
      reader.read();
      return reader.cancel();
    },
    "Cancelling a closed blob Response stream": () => {
      const reader = new Response(new Blob(["T"], { type: "text/plain" })).body.getReader();
      const closed = reader.closed.then(() => reader.cancel());
      reader.read().then(function more({ done }) {
        if (!done) return reader.read().then(more);
      });
      return closed;
    },
  },
  "cloned-any": {
    "FormData is cloned": async () => {
      const body = new FormData();
      body.set("a", "1");
      const res = new Response(body);
      const req = new Request("http://a", { method: "post", body });
      body.set("a", "2");
      yes((await res.formData()).get("a") === "1");
      yes((await req.formData()).get("a") === "1");
    },
    "URLSearchParams is cloned": async () => {
      const body = new URLSearchParams({ a: "1" });
      const res = new Response(body);
      const req = new Request("http://a", { method: "post", body });
      body.set("a", "2");
      yes((await res.formData()).get("a") === "1");
      yes((await req.formData()).get("a") === "1");
    },
    "TypedArray is cloned": async () => {
      const body = new Uint8Array([97]);
      const res = new Response(body);
      const req = new Request("http://a", { method: "post", body });
      body[0] = 98;
      yes((await res.text()) === "a");
      yes((await req.text()) === "a");
    },
    "ArrayBuffer is cloned": async () => {
      const body = new Uint8Array([97]);
      const res = new Response(body.buffer);
      const req = new Request("http://a", { method: "post", body: body.buffer });
      body[0] = 98;
      yes((await res.text()) === "a");
      yes((await req.text()) === "a");
    },
    "Blob is cloned": async () => {
      const body = new Blob(["a"]);
      const res = new Response(body);
      const req = new Request("http://a", { method: "post", body });
      yes((await res.blob()) !== body);
      yes((await req.blob()) !== body);
    },
  },
});

for (const [file, names] of Object.entries(DATA.cases)) byName(S, file, names, CHECKS[file] || {});

await runAll();
