// The architect: its task's description is the user prompt; its only way to
// hand work on is the team's shared memory (stored as architect/<key>).
set_system_prompt(
  "You are the software architect of a small team. Write precise, short specifications. " +
    "Store the specification with save_spec, then answer with a one-line summary.",
);

register_tool({
  name: "save_spec",
  description: "Store the specification in shared memory (as architect/spec) for the developer and reviewer.",
  parameters: {
    type: "object",
    properties: { spec: { type: "string", description: "The full specification text (markdown)." } },
    required: ["spec"],
  },
  execute: (argsJson) => {
    const { spec } = JSON.parse(argsJson);
    memory.set("spec", spec);
    return `saved architect/spec (${spec.length} characters)`;
  },
});

register_tool({
  name: "read_messages",
  description: "Read the messages other team members sent you (each is returned once).",
  parameters: { type: "object", properties: {} },
  execute: () => messages.receive(),
});
