// The stand-in host of a standalone build (`hugind build --standalone`).
//
// Compiled into the HUGIND_STANDALONE engine variant only. There the imports
// `hugind.call` and `hugind.submit` are not imports: shim.c routes them here,
// so the prelude and the module loader run unchanged and get ABI replies.
// What a plain WASI runtime can serve is served (the agent's own reports,
// timers, and its modules, from the embedded bundle); every capability op
// answers `Unsupported`, since without hugind there is no policy to ask.
//
// Evaluated as a script whose value is a factory: shim.c calls it with `sys`
// (write, getenv, argv, entropy) and the bundle's JSON text, and drives the
// object it returns: entry() -> the module to preload (at build time, before
// the snapshot); then from `_start`: start() -> the start message, next() ->
// the next async reply (or how long to sleep for one), finish() -> the exit
// status, after printing the result as `hugind run` prints it.
(function (sys, bundleText) {
  "use strict";
  const bundle = JSON.parse(bundleText);
  const modules = bundle.modules; // name -> base64 bytecode, as module.load answers it
  const outcome = { finished: false, hasValue: false, value: null, explicit: false, explicitValue: null, failure: null };
  const ready = []; // [id, reply text] answered at once, in submit order
  const timers = []; // {id, due}
  let nextId = 1;

  const ok = (value) => JSON.stringify({ ok: value === undefined ? null : value });
  const error = (kind, message) => JSON.stringify({ error: { kind, message } });
  const needsHost = (op) =>
    error(
      "Unsupported",
      `${op} needs the hugind host (this is a standalone build running under a plain WASI runtime; ` +
        "run the agent with `hugind run` for host capabilities)",
    );

  // The import rules of hugind/host/modules.py, over the modules built in.
  function normalize(path) {
    const out = [];
    for (const part of path.split("/")) {
      if (part === "" || part === ".") continue;
      if (part === ".." && out.length && out[out.length - 1] !== "..") out.pop();
      else out.push(part);
    }
    return out.join("/");
  }

  function resolve(base, specifier) {
    base = String(base);
    specifier = String(specifier);
    if (!specifier.startsWith("./") && !specifier.startsWith("../")) {
      throw `import '${specifier}' refused: only relative imports ('./' or '../') inside the agent are allowed`;
    }
    const dir = base === "hugind:prelude" || !base.includes("/") ? "" : base.slice(0, base.lastIndexOf("/"));
    const name = normalize(dir ? `${dir}/${specifier}` : specifier);
    if (name === ".." || name.startsWith("../")) {
      throw `import '${specifier}' from '${base}' refused: it resolves outside the agent root`;
    }
    if (!Object.prototype.hasOwnProperty.call(modules, name)) {
      throw `import '${specifier}' from '${base}': module '${name}' is not in this standalone build`;
    }
    return name;
  }

  function serve(op, args) {
    switch (op) {
      case "agent.done":
        outcome.finished = true;
        outcome.hasValue = Boolean(args.has_value);
        outcome.value = args.value === undefined ? null : args.value;
        return ok(null);
      case "agent.error":
        outcome.finished = true;
        outcome.failure = {
          name: String(args.name || "Error"),
          message: String(args.message || ""),
          stack: String(args.stack || ""),
        };
        return ok(null);
      case "agent.set_result":
        outcome.explicit = true;
        outcome.explicitValue = args.value === undefined ? null : args.value;
        return ok(null);
      case "module.resolve":
        return ok(resolve(args.base, args.specifier));
      case "module.load":
        return ok({ bytecode: modules[resolve("hugind:prelude", `./${args.name}`)] });
      default:
        return needsHost(op);
    }
  }

  function parse(text) {
    const req = JSON.parse(text);
    return [String(req.op), req.args && typeof req.args === "object" ? req.args : {}];
  }

  function call(text) {
    let op = "request";
    try {
      const [name, args] = parse(text);
      op = name;
      return serve(op, args);
    } catch (e) {
      const kind = op.startsWith("module.") ? "ModuleError" : "InvalidArgument";
      return error(kind, typeof e === "string" ? e : `${op}: ${e && e.message ? e.message : e}`);
    }
  }

  function submit(text) {
    const id = nextId++;
    let op = "request";
    try {
      const [name, args] = parse(text);
      op = name;
      if (op === "time.sleep") {
        const ms = Number(args.ms);
        if (!(ms >= 0)) ready.push([id, error("InvalidArgument", "time.sleep: 'ms' must be a non-negative number")]);
        else timers.push({ id, due: Date.now() + ms });
        return id;
      }
      ready.push([id, needsHost(op)]);
    } catch (e) {
      ready.push([id, error("InvalidArgument", `${op}: ${e && e.message ? e.message : e}`)]);
    }
    return id;
  }

  // [id, reply] to deliver now, [0, ms] to sleep first, or null: nothing is pending.
  function next() {
    if (ready.length) return ready.shift();
    if (!timers.length) return null;
    let first = 0;
    for (let i = 1; i < timers.length; i++) if (timers[i].due < timers[first].due) first = i;
    const wait = timers[first].due - Date.now();
    if (wait > 0) return [0, wait];
    const [timer] = timers.splice(first, 1);
    return [timer.id, ok(null)];
  }

  function hex(bytes) {
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  // The start message `hugind run` sends (hugind/run.py): args after the
  // program name, only declared environment variables, a run of its own with
  // no LLM backend.
  function start() {
    const env = {};
    const missing = [];
    for (const v of bundle.env) {
      const value = sys.getenv(v.name);
      if (value !== undefined) env[v.name] = value;
      else if (v.required) missing.push(v.name);
    }
    if (missing.length) {
      const s = missing.length > 1 ? "s" : "";
      sys.write(2, `hugind: error: required environment variable${s} not set: ${missing.join(", ")}\n`);
      return null;
    }
    const session = { id: hex(sys.entropy(16)), backend: null, base_url: null, model: null, mode: null };
    const input = { args: sys.argv().slice(1), meta: { session, env } };
    return JSON.stringify({ entry: `./${bundle.entry}`, mode: "script", version: bundle.version, team: false, input });
  }

  // ---- the result, byte for byte as `hugind run` prints it ---------------------
  // (Python's json.dumps(value, ensure_ascii=False) of the value the host decoded)

  const wellFormed = (s) =>
    typeof s.toWellFormed === "function" ? s.toWellFormed() : s.replace(/[\ud800-\udfff]/gu, "\ufffd");
  const pyString = (s) => JSON.stringify(wellFormed(s));

  // JSON integers become Python ints and print as written; other numbers are
  // floats, whose repr switches to an exponent (of at least two digits) below 1e-4.
  function pyNumber(n) {
    const text = JSON.stringify(n);
    if (n === 0 || Math.abs(n) >= 1e-4 || text === "null") return text;
    const [mantissa, exp] = n.toExponential().split("e");
    const sign = exp[0] === "-" ? "-" : "+";
    return `${mantissa}e${sign}${exp.replace(/^[-+]/, "").padStart(2, "0")}`;
  }

  function pyDump(v) {
    if (v === null || v === true || v === false) return String(v);
    if (typeof v === "number") return pyNumber(v);
    if (typeof v === "string") return pyString(v);
    if (Array.isArray(v)) return v.length ? `[${v.map(pyDump).join(", ")}]` : "[]";
    const keys = Object.keys(v);
    return keys.length ? `{${keys.map((k) => `${pyString(k)}: ${pyDump(v[k])}`).join(", ")}}` : "{}";
  }

  function finish() {
    if (outcome.failure) {
      const f = outcome.failure;
      let text = f.message ? `${f.name}: ${f.message}` : f.name;
      if (f.stack) text += `\n${f.stack.trimEnd()}`;
      sys.write(2, `hugind: error: ${text}\n`);
      return 1;
    }
    if (!outcome.finished) {
      sys.write(
        2,
        "hugind: error: Stalled: the agent is awaiting a promise that can never settle (no host operation is pending)\n",
      );
      return 1;
    }
    if (outcome.explicit) sys.write(1, pyDump(outcome.explicitValue) + "\n");
    else if (outcome.hasValue) sys.write(1, pyDump(outcome.value) + "\n");
    return 0;
  }

  const entry = () => bundle.entry;

  return { call, submit, next, start, finish, entry };
});
