// The JS side of the hugind engine. Evaluated once per instance as a script
// whose value is a factory: the C shim calls it with `native` (host bridge,
// raw stdio, UTF-8, bytecode) and gets back the dispatcher that every ABI
// export enters through. `native` is captured here and never reaches
// globalThis, so agent code only sees the globals below.
(function (native) {
  "use strict";
  const G = globalThis;
  // Globals that are not the agent's own: the engine's built-ins (now) and the
  // prelude's (as installed). register_tools_json never binds a tool to one.
  const notAgentGlobals = new Set(Object.getOwnPropertyNames(G));
  const pending = new Map(); // op id -> {resolve, reject, onProgress}
  const tools = new Map(); // agentic tool name -> execute function
  let runInfo = { version: "unknown", input: null };

  // ---- host calls ---------------------------------------------------------

  function hostError(e) {
    const err = new Error(String((e && e.message) || "host call failed"));
    err.name = String((e && e.kind) || "HostError");
    return err;
  }

  // A request's JSON, built by hand around the args: `op` is always one of the
  // prelude's own literal names (no character needs escaping), and building the
  // envelope costs QuickJS a third of JSON.stringify on the whole object.
  function request(op, args) {
    return args ? '{"op":"' + op + '","args":' + JSON.stringify(args) + "}" : '{"op":"' + op + '","args":{}}';
  }

  // The replies of the hot predicates (fs.exists, fs.is_file ...) and of ops that
  // return nothing (fs.write_text, a timer), known without parsing.
  const TRUE_REPLY = '{"ok":true}';
  const FALSE_REPLY = '{"ok":false}';
  const NULL_REPLY = '{"ok":null}';

  function call(op, args) {
    const text = native.call(request(op, args));
    if (text === TRUE_REPLY) return true;
    if (text === FALSE_REPLY) return false;
    if (text === NULL_REPLY) return null;
    const reply = JSON.parse(text);
    if (reply.error) throw hostError(reply.error);
    return reply.ok;
  }

  // A call whose only argument is a path (fs.exists, fs.read_text ...): a string
  // path's JSON is the string's own, with no object to walk.
  function callPath(op, path) {
    if (typeof path !== "string") return call(op, { path });
    const text = native.call('{"op":"' + op + '","args":{"path":' + JSON.stringify(path) + "}}");
    if (text === TRUE_REPLY) return true;
    if (text === FALSE_REPLY) return false;
    const reply = JSON.parse(text);
    if (reply.error) throw hostError(reply.error);
    return reply.ok;
  }

  // A blocking call of a streaming op: its events (LLM tokens) come back with
  // the reply, since the host never calls into the guest during a call.
  function callWithEvents(op, args) {
    const reply = JSON.parse(native.call(request(op, args)));
    if (reply.error) throw hostError(reply.error);
    return reply;
  }

  function submit(op, args, onProgress) {
    return new Promise((resolve, reject) => {
      const id = native.submit(request(op, args));
      pending.set(id, { resolve, reject, onProgress });
    });
  }

  function complete(id, text) {
    const entry = pending.get(id);
    if (!entry) return;
    if (text === NULL_REPLY) {
      pending.delete(id);
      entry.resolve(null);
      return;
    }
    const reply = JSON.parse(text);
    if ("progress" in reply) {
      if (entry.onProgress) entry.onProgress(reply.progress);
      return;
    }
    pending.delete(id);
    if (reply.error) entry.reject(hostError(reply.error));
    else entry.resolve(reply.ok);
  }

  // ---- formatting and stdio -----------------------------------------------

  function inspect(value, seen) {
    if (typeof value === "string") return value;
    if (value === undefined) return "undefined";
    if (typeof value === "function") return `[Function: ${value.name || "anonymous"}]`;
    if (typeof value === "bigint") return `${value}n`;
    if (typeof value === "symbol") return value.toString();
    if (value instanceof Error) return value.stack ? `${value.name}: ${value.message}\n${value.stack}` : String(value);
    if (value === null || typeof value !== "object") return String(value);
    seen = seen || new Set();
    if (seen.has(value)) return "[Circular]";
    seen.add(value);
    let out;
    if (Array.isArray(value)) out = `[ ${value.map((v) => show(v, seen)).join(", ")} ]`;
    else {
      const parts = Object.keys(value).map((k) => `${k}: ${show(value[k], seen)}`);
      out = parts.length ? `{ ${parts.join(", ")} }` : "{}";
    }
    seen.delete(value);
    return out;
  }

  // Nested values: strings are quoted, as console.log does.
  function show(value, seen) {
    return typeof value === "string" ? JSON.stringify(value) : inspect(value, seen);
  }

  const format = (args) => Array.prototype.map.call(args, (a) => inspect(a)).join(" ");
  const out = (text) => native.write(1, text);
  const err = (text) => native.write(2, text);

  // stdin is read through one buffer: input() costs a read per 4 KiB instead of
  // one per byte (each read is a WASI call the host may interpose), and
  // Javy.IO.readSync(0, ...) drains what input() read ahead, so mixing them loses nothing.
  // Allocated on first use: nothing of it is in the engine's snapshot.
  const stdin = { buf: null, start: 0, end: 0 };

  function stdinBuffered() {
    if (stdin.start < stdin.end) return true;
    if (stdin.buf === null) stdin.buf = new Uint8Array(4096);
    stdin.start = 0;
    stdin.end = native.read(0, stdin.buf);
    return stdin.end > 0;
  }

  function readLine() {
    const parts = [];
    let size = 0;
    while (stdinBuffered()) {
      const { buf, start, end } = stdin;
      let stop = buf.indexOf(10, start);
      const found = stop !== -1 && stop < end;
      if (!found) stop = end;
      parts.push(buf.slice(start, stop));
      size += stop - start;
      stdin.start = found ? stop + 1 : stop;
      if (found) break;
    }
    const line = new Uint8Array(size);
    let at = 0;
    for (const part of parts) {
      line.set(part, at);
      at += part.length;
    }
    const text = size && line[size - 1] === 13 ? line.subarray(0, size - 1) : line;
    return native.decode(text, false);
  }

  function readStdin(data) {
    if (stdin.start < stdin.end) {
      const n = Math.min(data.length, stdin.end - stdin.start);
      data.set(stdin.buf.subarray(stdin.start, stdin.start + n));
      stdin.start += n;
      return n;
    }
    return native.read(0, data);
  }

  function toBytes(input) {
    if (input instanceof Uint8Array) return input;
    if (input instanceof ArrayBuffer) return new Uint8Array(input);
    if (ArrayBuffer.isView(input)) return new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
    throw new TypeError("expected an ArrayBuffer or an ArrayBuffer view");
  }

  // ---- globals: output, input, args, result ---------------------------------

  function install(name, value) {
    notAgentGlobals.add(name);
    // A built-in function has a name: an arrow passed straight in has none.
    if (typeof value === "function" && value.name === "") Object.defineProperty(value, "name", { value: name });
    Object.defineProperty(G, name, { value, writable: true, configurable: true, enumerable: false });
  }

  // The web-standard globals (URL, fetch's Response, crypto, events, ...):
  // one API per file in runtimes/js/web/, spliced in below by build_engine.py.
  // Each is a function over this shared scope; it only defines and installs.
  const webGlobals = [];
  const installWeb = (name, value) => {
    webGlobals.push(name);
    install(name, value);
  };
  const web = { native, G, install: installWeb, submit, call, toBytes };
  for (const setUp of [/* @hugind-web-modules */]) setUp(web);
  for (const name of webGlobals) shapeLikeWebIDL(name, G[name]);

  // The web globals take the shape WebIDL gives interfaces, as node and the
  // browsers have them: an interface's prototype members and static
  // operations are enumerable, its @@toStringTag is a read-only string, its
  // @@iterator is entries() itself, its methods are not constructors (a
  // generator method is wrapped in a plain one); the global's operations and
  // attributes (fetch, setTimeout, crypto) are enumerable. Intl is ECMA-402's,
  // shaped like ECMAScript's built-ins instead.
  function shapeLikeWebIDL(name, value) {
    if (name === "Intl") return;
    const isInterface = typeof value === "function" && /^[A-Z]/.test(name) && Object.hasOwn(value, "prototype");
    if (!isInterface) {
      Object.defineProperty(G, name, { enumerable: true });
      return;
    }
    const proto = value.prototype;
    for (const key of Reflect.ownKeys(proto)) {
      const d = Object.getOwnPropertyDescriptor(proto, key);
      if (key === Symbol.toStringTag) {
        Object.defineProperty(proto, key, { value: name, writable: false, enumerable: false, configurable: true });
        continue;
      }
      if (key === "constructor" || typeof key === "symbol" || !d.configurable) continue;
      if (typeof d.value === "function" && Object.hasOwn(d.value, "prototype")) d.value = asMethod(key, d.value);
      d.enumerable = true;
      Object.defineProperty(proto, key, d);
    }
    const sameAs = (symbol, name) => {
      if (!Object.hasOwn(proto, symbol) || !Object.hasOwn(proto, name)) return;
      Object.defineProperty(proto, symbol, { value: proto[name], writable: true, enumerable: false, configurable: true });
    };
    sameAs(Symbol.iterator, "entries");
    sameAs(Symbol.asyncIterator, "values");
    for (const key of Reflect.ownKeys(value)) {
      if (typeof key === "symbol" || key === "length" || key === "name" || key === "prototype") continue;
      Object.defineProperty(value, key, { enumerable: true });
    }
  }
  function asMethod(name, fn) {
    const method = {
      [name](...args) {
        return fn.apply(this, args);
      },
    }[name];
    Object.defineProperty(method, "length", { value: fn.length });
    return method;
  }

  install("print", (...args) => void out(format(args) + "\n"));
  install("print_raw", (...args) => void out(format(args)));
  install("eprint", (...args) => void err(format(args) + "\n"));
  install("input", (prompt) => {
    if (prompt !== undefined) out(String(prompt));
    return readLine();
  });
  install("hugind_version", () => runInfo.version);
  install("get_args_json", () => JSON.stringify(runInfo.input));
  install("get_args", () => JSON.stringify(runInfo.input));
  install("set_result", (value) => {
    call("agent.set_result", { value: value === undefined ? null : value });
  });
  install("console", {
    log: (...a) => void out(format(a) + "\n"),
    info: (...a) => void out(format(a) + "\n"),
    debug: (...a) => void out(format(a) + "\n"),
    error: (...a) => void err(format(a) + "\n"),
    warn: (...a) => void err(format(a) + "\n"),
  });
  install("Javy", {
    IO: {
      readSync(fd, data) {
        if (!(data instanceof Uint8Array)) throw new TypeError("Data needs to be an Uint8Array");
        return fd === 0 ? readStdin(data) : native.read(fd, data);
      },
      writeSync(fd, data) {
        if (!(data instanceof Uint8Array)) throw new TypeError("Data needs to be an Uint8Array");
        return native.write(fd, data);
      },
    },
  });

  // ---- globals: capabilities (every one is checked by the host policy) -----

  // fs.write_bytes's data: a string as its UTF-8; bytes (a list of 0..255, a typed array's
  // or an ArrayBuffer's bytes, as node writes them) as base64, a third more text than the
  // bytes where a JSON list is three to four times. A list holding anything but integers
  // 0..255 goes as a list, for the host to refuse naming it. native.listBytes reads a
  // dense array's values directly (undefined for any other list: this loop does it).
  const isByte = (b) => Number.isInteger(b) && b >= 0 && b <= 255;
  function bytesForHost(data) {
    if (typeof data === "string") return { data };
    let bytes;
    if (ArrayBuffer.isView(data)) bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    else if (data instanceof ArrayBuffer) bytes = new Uint8Array(data);
    else {
      // An iterable is read once (a generator has nothing left for a second Array.from).
      let list = data;
      bytes = Array.isArray(data) ? native.listBytes(data) : undefined;
      if (bytes === undefined) {
        list = Array.from(data);
        bytes = list.every(isByte) ? Uint8Array.from(list) : null;
      }
      if (bytes === null) return { data: Array.from(list) };
    }
    return { data_base64: bytes.toBase64() };
  }

  const fs = {
    cwd: () => call("fs.cwd"),
    exists: (path) => callPath("fs.exists", path),
    is_file: (path) => callPath("fs.is_file", path),
    is_dir: (path) => callPath("fs.is_dir", path),
    realpath: (path) => callPath("fs.realpath", path),
    read_text: (path) => callPath("fs.read_text", path),
    read_bytes: (path) => native.byteList(Uint8Array.fromBase64(call("fs.read_bytes", { path, encoding: "base64" }))),
    write_text: (path, data) => void call("fs.write_text", { path, data: String(data) }),
    write_bytes: (path, data) => void call("fs.write_bytes", { path, ...bytesForHost(data) }),
    append_text: (path, data) => void call("fs.append_text", { path, data: String(data) }),
    list_dir: (path) => JSON.stringify(callPath("fs.list_dir", path)),
    mkdir: (path, recursive = false) => void call("fs.mkdir", { path, recursive: Boolean(recursive) }),
    remove: (path, recursive = false) => void call("fs.remove", { path, recursive: Boolean(recursive) }),
    rename: (src, dst) => void call("fs.rename", { src, dst }),
    copy: (src, dst) => void call("fs.copy", { src, dst }),
    stat: (path) => JSON.stringify(callPath("fs.stat", path)),
  };
  install("fs", fs);

  // Shell results resolve to the combined output, like a terminal shows it;
  // pass {detailed: true} for {stdout, stderr, exit_code, timed_out, truncated}.
  const shellText = (r) => r.stdout + r.stderr;
  const run_command = (command, options = {}) =>
    submit("shell.run", { command: String(command) }).then((r) => (options.detailed ? r : shellText(r)));
  install("run_command", run_command);
  install("runCommand", run_command);
  install("spawn", (program, args = [], options = {}) =>
    submit("shell.spawn", { program: String(program), args: Array.from(args, String) }).then((r) =>
      options.detailed ? r : shellText(r),
    ),
  );

  // fetch, Request, Response and Headers: web/fetch.js.
  // http_get/http_post, ask_llm*, mcp_call_tool return text, as the seed
  // specifies: the guest blocks in a host call (bounded by the run's deadline;
  // `await` on the text still works). Their *_async twins return Promises
  // whose host work runs in parallel, for Promise.all.
  const getArgs = (url, headers = {}) => ({ url: String(url), method: "GET", headers });
  const postArgs = (url, body, headers = {}) => ({
    url: String(url),
    method: "POST",
    headers,
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  install("http_get", (url, headers) => call("net.fetch", getArgs(url, headers)).body);
  install("http_post", (url, body, headers) => call("net.fetch", postArgs(url, body, headers)).body);
  install("http_get_async", (url, headers) => submit("net.fetch", getArgs(url, headers)).then((r) => r.body));
  install("http_post_async", (url, body, headers) =>
    submit("net.fetch", postArgs(url, body, headers)).then((r) => r.body),
  );

  // ask_llm(prompt | request): a plain string gets response_format json_object
  // (decided host side, as the seed specifies); an object passes through.
  function llmArgs(request) {
    if (typeof request === "string") return { prompt: request };
    const body = Object.assign({}, request);
    delete body.on_token;
    delete body.onToken;
    return { request: body };
  }
  const tokenCallback = (request) => {
    const fn = request && typeof request === "object" ? request.on_token || request.onToken : undefined;
    return typeof fn === "function" ? fn : () => {};
  };
  install("ask_llm", (request) => call("llm.ask", llmArgs(request)));
  install("ask_llm_async", (request) => submit("llm.ask", llmArgs(request)));
  // Blocking: on_token sees every delta in order once the answer is complete,
  // before ask_llm_stream returns. ask_llm_stream_async calls it as tokens arrive.
  install("ask_llm_stream", (request) => {
    const onToken = tokenCallback(request);
    const reply = callWithEvents("llm.ask_stream", llmArgs(request));
    for (const token of reply.events || []) onToken(token);
    return reply.ok;
  });
  install("ask_llm_stream_async", (request) => submit("llm.ask_stream", llmArgs(request), tokenCallback(request)));

  const mcpArgs = (name, args = {}) => ({
    name: String(name),
    arguments: typeof args === "string" ? JSON.parse(args) : args,
  });
  install("mcp_list_tools", () => JSON.stringify(call("mcp.list_tools")));
  install("mcp_call_tool", (name, args) => JSON.stringify(call("mcp.call_tool", mcpArgs(name, args))));
  install("mcp_call_tool_async", (name, args) =>
    submit("mcp.call_tool", mcpArgs(name, args)).then((r) => JSON.stringify(r)),
  );

  // ---- agentic mode ---------------------------------------------------------

  function registerTool(def) {
    if (!def || typeof def.name !== "string" || !def.name) throw new TypeError("register_tool: 'name' must be a non-empty string");
    if (typeof def.execute !== "function") throw new TypeError(`register_tool('${def.name}'): 'execute' must be a function`);
    call("agent.register_tool", {
      name: def.name,
      description: String(def.description || ""),
      parameters: def.parameters || { type: "object", properties: {} },
    });
    tools.set(def.name, def.execute);
  }

  // One definition of register_tools_json: flat {name, description, parameters
  // | input_schema, execute?} or OpenAI's {type: "function", function: {...}}.
  // JSON holds no functions, so `execute` *names* one (default: the tool's
  // name), looked up in `handlers`, then among the agent's own globals.
  function toolFromJson(def, index, handlers) {
    const spec = def && typeof def === "object" && def.function && typeof def.function === "object" ? def.function : def;
    if (!spec || typeof spec !== "object" || typeof spec.name !== "string" || !spec.name) {
      throw new TypeError(`register_tools_json: tool #${index} needs a non-empty 'name'`);
    }
    const fnName = spec.execute === undefined ? spec.name : spec.execute;
    if (typeof fnName !== "string") {
      throw new TypeError(`register_tools_json: tool '${spec.name}': 'execute' must be the name of a function`);
    }
    const own = (o) => o && Object.prototype.hasOwnProperty.call(o, fnName);
    const fn = own(handlers) ? handlers[fnName] : !notAgentGlobals.has(fnName) && own(G) ? G[fnName] : undefined;
    if (typeof fn !== "function") {
      throw new TypeError(
        `register_tools_json: tool '${spec.name}': no function '${fnName}' in the handlers argument or on globalThis`,
      );
    }
    return {
      name: spec.name,
      description: spec.description,
      parameters: spec.parameters || spec.input_schema,
      execute: fn,
    };
  }

  function installAgentic() {
    install("register_tool", registerTool);
    install("register_tools_json", (json, handlers) => {
      const defs = typeof json === "string" ? JSON.parse(json) : json;
      if (!Array.isArray(defs)) throw new TypeError("register_tools_json: expected a JSON array of tool definitions");
      // Every definition is checked before any is registered.
      const resolved = defs.map((def, i) => toolFromJson(def, i, handlers));
      resolved.forEach(registerTool);
      return resolved.map((t) => t.name);
    });
    install("get_tool_results", () => JSON.stringify(call("agent.tool_results")));
    install("set_system_prompt", (prompt) => void call("agent.set_system_prompt", { prompt: String(prompt) }));
    install("set_max_turns", (turns) => void call("agent.set_max_turns", { turns: Number(turns) }));
  }

  function installTeam() {
    install("memory", {
      set: (key, value) => void call("team.memory_set", { key: String(key), value }),
      get: (key) => JSON.stringify(call("team.memory_get", { key: String(key) })),
      all: () => JSON.stringify(call("team.memory_all")),
      summary: () => call("team.memory_summary"),
    });
    install("messages", {
      send: (to, content) => void call("team.send", { to: String(to), content: String(content) }),
      broadcast: (content) => void call("team.broadcast", { content: String(content) }),
      receive: () => JSON.stringify(call("team.receive")),
    });
    install("tasks", {
      spawn: (spec) => call("team.spawn_task", { task: typeof spec === "string" ? JSON.parse(spec) : spec }),
    });
  }

  // ---- the dispatcher ---------------------------------------------------------

  // Frames of this prelude are noise to an agent author; very deep stacks
  // (runaway recursion) keep their head and tail.
  function cleanStack(stack) {
    const lines = String(stack || "")
      .split("\n")
      .filter((line) => line && !line.includes("hugind:prelude"));
    if (lines.length > 24) lines.splice(20, lines.length - 22, `    ... ${lines.length - 22} more frames`);
    return lines.join("\n");
  }

  function errorInfo(e) {
    if (e instanceof Error) {
      return { name: String(e.name || "Error"), message: String(e.message), stack: cleanStack(e.stack) };
    }
    let text;
    try {
      text = typeof e === "string" ? e : JSON.stringify(e);
    } catch (_) {
      text = String(e);
    }
    return { name: "Uncaught", message: String(text), stack: "" };
  }

  async function runMain(msg) {
    const ns = await import(msg.entry);
    if (msg.mode === "agentic" || !("default" in ns)) return { has_value: false };
    const value = typeof ns.default === "function" ? await ns.default(msg.input) : ns.default;
    // JSON.stringify is the contract: a value that does not survive it is an error here,
    // in the agent's own terms, rather than a surprise on the host side.
    return { has_value: true, value: value === undefined ? null : JSON.parse(JSON.stringify(value) ?? "null") };
  }

  async function runTool(msg) {
    const execute = tools.get(msg.name);
    if (!execute) throw new Error(`unknown tool '${msg.name}'`);
    let result = await execute(msg.args);
    if (result === undefined || result === null || result === "") return "OK";
    return typeof result === "string" ? result : JSON.stringify(result);
  }

  // The host may refuse the result itself (nested too deeply for it): report
  // that as the failure, as hugind.h does, instead of leaving the host waiting
  // for an outcome that never comes.
  function reportDone(r) {
    try {
      call("agent.done", r);
    } catch (e) {
      const message = `the host refused the agent's result: ${e.name}: ${e.message}`;
      call("agent.error", { name: "InvalidResult", message, stack: "" });
    }
  }

  return function dispatch(kind, text, opId) {
    if (kind === "complete") return complete(opId, text);
    const msg = JSON.parse(text);
    if (kind === "main") {
      runInfo = { version: msg.version, input: msg.input };
      if (msg.mode === "agentic") installAgentic();
      if (msg.team) installTeam();
      runMain(msg).then(
        (r) => reportDone(r),
        (e) => call("agent.error", errorInfo(e)),
      );
      return;
    }
    if (kind === "tool") {
      runTool(msg).then(
        (value) => call("tool.result", { call_id: msg.call_id, value }),
        (e) => call("tool.result", { call_id: msg.call_id, error: errorInfo(e) }),
      );
      return;
    }
    if (kind === "compile") {
      // hugind build: one module to bytecode; with `resolve`, its imports are
      // loaded (not run) through the host loader, which records the graph.
      let reply;
      try {
        reply = { name: msg.name, bytecode: Array.from(native.compile(msg.name, msg.source, Boolean(msg.resolve))) };
      } catch (e) {
        const info = errorInfo(e);
        info.stack = info.stack.replace(/\n?\s*at compile \(native\)/g, "");
        reply = { name: msg.name, error: info };
      }
      call("build.module", reply);
      return;
    }
    throw new Error(`unknown dispatch kind '${kind}'`);
  };
});
