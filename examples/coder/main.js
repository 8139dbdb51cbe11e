// An agentic agent: it registers tools; the host runs the LLM loop and calls
// them back in the sandbox, each call checked by the policy in agent.yaml.
set_system_prompt(
  "You are a careful coding assistant. Explore the workspace with your tools before answering. " +
    "Quote file paths exactly. Answer concisely.",
);

register_tool({
  name: "run",
  description: "Run a read-only shell command (ls, cat, grep, wc, head, tail, sort, uniq) in the workspace.",
  parameters: {
    type: "object",
    properties: { command: { type: "string", description: "The command line to run." } },
    required: ["command"],
  },
  execute: async (argsJson) => {
    const { command } = JSON.parse(argsJson);
    const r = await run_command(command, { detailed: true });
    const status = r.timed_out ? "timed out" : `exit ${r.exit_code}`;
    return `${r.stdout}${r.stderr}${r.truncated ? "\n[output truncated]" : ""}\n[${status}]`;
  },
});

register_tool({
  name: "read_file",
  description: "Read the full contents of a file in the workspace.",
  parameters: {
    type: "object",
    properties: { path: { type: "string", description: "Path relative to the agent folder, e.g. workspace/app.py." } },
    required: ["path"],
  },
  execute: (argsJson) => fs.read_text(JSON.parse(argsJson).path),
});

register_tool({
  name: "search",
  description: "Search for a text pattern in the files under a directory; prints file:line: text.",
  parameters: {
    type: "object",
    properties: {
      path: { type: "string", description: "Directory relative to the workspace, e.g. '.'." },
      pattern: { type: "string", description: "A fixed string to look for." },
    },
    required: ["path", "pattern"],
  },
  execute: async (argsJson) => {
    const { path, pattern } = JSON.parse(argsJson);
    // spawn passes arguments verbatim: no shell, so the pattern cannot inject commands.
    const out = await spawn("grep", ["-rnF", "--", pattern, path]);
    return out || "no matches";
  },
});
