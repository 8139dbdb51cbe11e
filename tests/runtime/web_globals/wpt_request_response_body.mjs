// The rest of the Request/Response suite (after wpt_request_response.mjs, in
// the same script): request bodies from streams, consuming bodies, their MIME
// types and form bodies.
const POST = "POST";
const half = "half";
const streamUsed = {
  "getReader() is called": (s) => s.getReader(),
  "read() is called": (s) => s.getReader().read(),
};
const bodyKinds = {
  null: () => null,
  "a string": () => "...",
  "a Uint8Array": () => new Uint8Array(3),
  "a Blob": () => new Blob([]),
  "a ReadableStream": () => new ReadableStream(),
};
const initStream = {
  "Constructing a Request with a stream holds the original object.": () => {
    const body = new ReadableStream();
    eq(new Request(rel("..."), { method: POST, body, duplex: half }).body, body);
  },
  ...Object.fromEntries(
    Object.entries(streamUsed).map(([what, use]) => [
      `Constructing a Request with a stream on which ${what}`,
      () => {
        const body = new ReadableStream();
        use(body);
        throwsJs(TypeError, () => new Request(rel("..."), { method: POST, body, duplex: half }));
      },
    ]),
  ),
  "Constructing a Request with a stream on which read() and releaseLock() are called": async () => {
    const body = new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array()) });
    const reader = body.getReader();
    await reader.read();
    reader.releaseLock();
    throwsJs(TypeError, () => new Request(rel("..."), { method: POST, body, duplex: half }));
  },
  "Constructing a Request with a Request on which body.getReader() is called": () => {
    const request = new Request(rel("..."), { method: POST, body: "..." });
    request.body.getReader();
    throwsJs(TypeError, () => new Request(request));
    new Request(request, { body: "..." });
  },
  "Constructing a Request with a Request on which body.getReader().read() is called": () => {
    const request = new Request(rel("..."), { method: POST, body: "..." });
    request.body.getReader().read();
    throwsJs(TypeError, () => new Request(request));
    new Request(request, { body: "..." });
  },
  "Constructing a Request with a Request on which read() and releaseLock() are called": async () => {
    const request = new Request(rel("..."), { method: POST, body: "..." });
    const reader = request.body.getReader();
    await reader.read();
    reader.releaseLock();
    throwsJs(TypeError, () => new Request(request));
    new Request(request, { body: "..." });
  },
  "It is error to omit .duplex when the body is a ReadableStream.": () =>
    throwsJs(TypeError, () => new Request(rel("..."), { method: POST, body: new ReadableStream() })),
  "It is OK to omit duplex when init.body is not given and input.body is given.": () => {
    const first = new Request(rel("..."), { method: POST, body: new ReadableStream(), duplex: half });
    new Request(first);
  },
};
for (const [what, make] of Object.entries(bodyKinds)) {
  if (what !== "a ReadableStream") {
    initStream[`It is OK to omit .duplex when the body is ${what}.`] = () => new Request(rel("..."), { method: POST, body: make() });
  }
  initStream[`It is OK to set .duplex = 'half' when the body is ${what}.`] = () =>
    new Request(rel("..."), { method: POST, body: make(), duplex: half });
  initStream[`It is error to set .duplex = 'full' when the body is ${what}.`] = () =>
    throwsJs(TypeError, () => new Request(rel("..."), { method: POST, body: make(), duplex: "full" }));
}

// request-consume
const textData = JSON.stringify("This is response's body");
const consumeString = DATA.consume_string;
function bufferOf(withZeros) {
  const buffer = new ArrayBuffer(withZeros ? 10 : 8);
  const view = new Int8Array(buffer);
  for (let i = 0; i < 8; i++) view[i + (withZeros ? 1 : 0)] = consumeString.charCodeAt(i);
  return buffer;
}
function sameBytes(buffer, text) {
  const bytes = new Uint8Array(buffer);
  eq(bytes.length, text.length);
  for (let i = 0; i < text.length; i++) eq(bytes[i], text.charCodeAt(i), `byte ${i}`);
}
const readAs = {
  text: async (r, expected, contentType) => {
    eq(await r.text(), expected);
    yes(r.bodyUsed);
  },
  blob: async (r, expected) => {
    eq(await (await r.blob()).text(), expected);
    yes(r.bodyUsed);
  },
  arrayBuffer: async (r, expected) => {
    sameBytes(await r.arrayBuffer(), expected);
    yes(r.bodyUsed);
  },
  bytes: async (r, expected) => {
    const b = await r.bytes();
    yes(b instanceof Uint8Array);
    sameBytes(b.buffer, expected);
    yes(r.bodyUsed);
  },
  JSON: async (r, expected) => {
    eq(JSON.stringify(await r.json()), expected);
    yes(r.bodyUsed);
  },
};
const consumeBodies = {
  String: [() => textData, textData],
  ArrayBuffer: [() => bufferOf(false), consumeString],
  Uint8Array: [() => new Uint8Array(bufferOf(false)), consumeString],
  Int8Array: [() => new Int8Array(bufferOf(true), 1, 8), consumeString],
  Float32Array: [() => new Float32Array(bufferOf(false)), consumeString],
  DataView: [() => new DataView(bufferOf(true), 1, 8), consumeString],
};
const consume = {};
for (const [kind, [make, expected]] of Object.entries(consumeBodies)) {
  for (const [how, check] of Object.entries(readAs)) {
    consume[`Consume ${kind} request's body as ${how}`] = () => {
      const init = { method: POST, body: make() };
      if (how === "text") init.headers = [["Content-Type", "text/PLAIN"]];
      const r = new Request(rel(""), init);
      no(r.bodyUsed);
      return check(r, expected);
    };
  }
}
consume["Consume FormData request's body as FormData"] = async () => {
  const f = new FormData();
  f.append("name", "value");
  const r = new Request(rel(""), { method: POST, body: f });
  no(r.bodyUsed);
  yes((await r.formData()) instanceof FormData);
  yes(r.bodyUsed);
};
const textBlob = () => new Blob([textData], { type: "text/plain" });
for (const [how, check, make, expected] of [
  ["blob", readAs.blob, textBlob, textData],
  ["text", readAs.text, textBlob, textData],
  ["json", readAs.JSON, textBlob, textData],
  ["arrayBuffer", readAs.arrayBuffer, textBlob, textData],
  ["bytes", readAs.bytes, textBlob, textData],
  ["blob (empty blob as input)", readAs.blob, () => new Blob([""]), ""],
]) {
  consume[`Consume blob response's body as ${how}`] = () => {
    const r = new Response(make());
    no(r.bodyUsed);
    return check(r, expected);
  };
}
for (const value of ["null", "1", "true", '"string"']) {
  consume[`Consume JSON from text: '${JSON.stringify(value)}'`] = async () =>
    eq(await new Request(rel(""), { method: POST, body: value }).json(), JSON.parse(value));
}
for (const value of ["undefined", "{", "a", "["]) {
  consume[`Trying to consume bad JSON text as JSON: '${value}'`] = () =>
    rejectsJs(SyntaxError, new Request(rel(""), { method: POST, body: value }).json());
}

// body/mime-type: each case made for a Request and for a Response.
const both = (request, response) => ({ Request: request, Response: response });
const MIME = {
  "overriding explicit Content-Type": [
    both(
      () => new Request("about:blank", { headers: { "Content-Type": "text/plain" } }),
      () => new Response("", { headers: { "Content-Type": "text/plain" } }),
    ),
    async (c) => {
      eq(c.headers.get("Content-Type"), "text/plain");
      c.headers.set("Content-Type", "test/test");
      eq((await c.blob()).type, "test/test");
    },
  ],
  "removing implicit Content-Type": [
    both(
      () => new Request("about:blank", { body: new URLSearchParams(), method: POST }),
      () => new Response(new URLSearchParams()),
    ),
    async (c) => {
      eq(c.headers.get("Content-Type"), "application/x-www-form-urlencoded;charset=UTF-8");
      c.headers.delete("Content-Type");
      eq((await c.blob()).type, "");
    },
  ],
  "setting missing Content-Type": [
    both(
      () => new Request("about:blank", { body: new ArrayBuffer(), method: POST }),
      () => new Response(new ArrayBuffer()),
    ),
    async (c) => {
      eq(c.headers.get("Content-Type"), null);
      c.headers.set("Content-Type", "test/test");
      eq((await c.blob()).type, "test/test");
    },
  ],
  "MIME type for Blob from empty body": [
    both(() => new Request("about:blank", { method: POST }), () => new Response()),
    async (c) => eq((await c.blob()).type, ""),
  ],
  "MIME type for Blob from empty body with Content-Type": [
    both(
      () => new Request("about:blank", { method: POST, headers: [["Content-Type", "Mytext/Plain"]] }),
      () => new Response("", { headers: [["Content-Type", "Mytext/Plain"]] }),
    ),
    async (c) => eq((await c.blob()).type, "mytext/plain"),
  ],
  "MIME type for Blob": [
    both(() => new Request("about:blank", { body: new Blob([""]), method: POST }), () => new Response(new Blob([""]))),
    async (c) => {
      eq((await c.blob()).type, "");
      eq(c.headers.get("Content-Type"), null);
    },
  ],
  "MIME type for Blob with non-empty type": [
    both(
      () => new Request("about:blank", { body: new Blob([""], { type: "Text/Plain" }), method: POST }),
      () => new Response(new Blob([""], { type: "Text/Plain" })),
    ),
    async (c) => {
      eq((await c.blob()).type, "text/plain");
      eq(c.headers.get("Content-Type"), "text/plain");
    },
  ],
  "Extract a MIME type with clone": [
    both(
      () =>
        new Request("about:blank", {
          method: POST,
          body: new Blob([""], { type: "Text/Plain" }),
          headers: [["Content-Type", "Text/Html"]],
        }),
      () => new Response(new Blob([""], { type: "Text/Plain" }), { headers: [["Content-Type", "Text/Html"]] }),
    ),
    async (c) => {
      const copy = c.clone();
      eq((await c.blob()).type, "text/html");
      eq((await copy.blob()).type, "text/html");
      eq(c.headers.get("Content-Type"), "Text/Html");
      eq(copy.headers.get("Content-Type"), "Text/Html");
    },
  ],
  'Content-Type in headers wins Blob"s type': [
    both(
      () =>
        new Request("about:blank", {
          body: new Blob([], { type: "text/plain" }),
          method: POST,
          headers: [["Content-Type", "text/html"]],
        }),
      () => new Response(new Blob([], { type: "text/plain" }), { headers: [["Content-Type", "text/html"]] }),
    ),
    async (c) => {
      eq(c.headers.get("Content-Type"), "text/html");
      eq((await c.blob()).type, "text/html");
    },
  ],
  'setting missing Content-Type in headers and it wins Blob"s type': [
    both(
      () => new Request("about:blank", { body: new Blob([], { type: "text/plain" }), method: POST }),
      () => new Response(new Blob([], { type: "text/plain" })),
    ),
    async (c) => {
      eq(c.headers.get("Content-Type"), "text/plain");
      c.headers.set("Content-Type", "text/html");
      eq((await c.blob()).type, "text/html");
    },
  ],
};
const mimeChecks = {};
for (const [name, [makers, check]] of Object.entries(MIME)) {
  for (const [kind, make] of Object.entries(makers)) {
    // WPT makes the container when the file loads, and checks it later.
    const container = make();
    mimeChecks[`${kind}: ${name}`] = () => check(container);
  }
}

Object.assign(CHECKS, {
  "request-init-stream": initStream,
  "request-constructor-init-body-override": {
    "Check that the body of a new request can be overridden when created from an existing Request object": async () => {
      const first = new Request("https://example.com/", { body: "req1", method: POST });
      eq(await first.text(), "req1");
      eq(await new Request(first, { body: "req2" }).text(), "req2");
    },
    "Check that the body of a new request can be duplicated from an existing Request object": async () => {
      const first = new Request("https://example.com/", { body: "req1", method: POST });
      eq(await new Request("https://example.com/", first).text(), "req1");
    },
  },
  "request-init-priority": {
    ...Object.fromEntries(
      ["high", "low", "auto"].map((p) => [`new Request() with a '${p}' priority does not throw an error`, () => new Request(rel(""), { priority: p })]),
    ),
    "new Request() throws a TypeError if any of RequestInit's members' values are invalid": () =>
      throwsJs(TypeError, () => new Request(rel(""), { priority: "invalid" })),
  },
  "request-keepalive": {
    "keepalive flag": () => {
      no(new Request(rel("/")).keepalive);
      yes(new Request(rel("/"), { keepalive: true }).keepalive);
      no(new Request(rel("/"), { keepalive: false }).keepalive);
      yes(new Request(rel("/"), { keepalive: 1 }).keepalive);
      no(new Request(rel("/"), { keepalive: 0 }).keepalive);
    },
    "keepalive flag with stream body": () =>
      throwsJs(TypeError, () => new Request(rel("/"), { method: POST, keepalive: true, body: new ReadableStream() })),
  },
  "response-from-stream": {
    ...Object.fromEntries(
      Object.entries(streamUsed).map(([what, use]) => [
        `Constructing a Response with a stream on which ${what}`,
        () => {
          const stream = new ReadableStream();
          use(stream);
          throwsJs(TypeError, () => new Response(stream));
        },
      ]),
    ),
    "Constructing a Response with a stream on which read() and releaseLock() are called": async () => {
      const stream = new ReadableStream({ pull: (c) => c.enqueue(new Uint8Array()) });
      const reader = stream.getReader();
      await reader.read();
      reader.releaseLock();
      throwsJs(TypeError, () => new Response(stream));
    },
  },
  "response-stream-bad-chunk": Object.fromEntries(
    ["arrayBuffer", "blob", "bytes", "formData", "json", "text"].map((m) => [
      `ReadableStream with non-Uint8Array chunk passed to Response.${m}() causes TypeError`,
      () => {
        const stream = new ReadableStream({
          start(c) {
            c.enqueue("not Uint8Array");
            c.close();
          },
        });
        return rejectsJs(TypeError, new Response(stream)[m]());
      },
    ]),
  ),
  formdata: {
    "Consume empty response.formData() as FormData": async () =>
      yes((await new Response(new FormData()).formData()) instanceof FormData),
    "Consume empty request.formData() as FormData": async () =>
      yes((await new Request("about:blank", { method: POST, body: new FormData() }).formData()) instanceof FormData),
    "Consume multipart/form-data headers case-insensitively": async () => {
      const f = new FormData();
      f.append("foo", new Blob([JSON.stringify({ bar: "baz" })], { type: "application/json" }));
      let blob = await new Response(f).blob();
      const body = await blob.text();
      blob = new Blob([body.toLowerCase()], { type: blob.type.toLowerCase() });
      const parsed = await new Response(blob).formData();
      yes(parsed.has("foo"));
      eq(parsed.get("foo").type, "application/json");
    },
  },
  "mime-type": mimeChecks,
  "request-consume": consume,
});

