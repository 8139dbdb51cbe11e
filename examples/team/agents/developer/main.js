// The developer: reads what others stored, stores its own work as
// developer/<key>, talks to the team and queues follow-up tasks.
set_system_prompt(
  "You are the developer of a small team. Read what you need from shared memory, do the work, " +
    "store results with remember, and keep the team informed with send_message. " +
    "When you are done, answer with a one-line summary.",
);

register_tool({
  name: "read_memory",
  description: "Read a shared memory entry by its full key, e.g. architect/spec. Returns null if missing.",
  parameters: { type: "object", properties: { key: { type: "string" } }, required: ["key"] },
  execute: (argsJson) => {
    const value = JSON.parse(memory.get(JSON.parse(argsJson).key));
    return value === null ? "null (no such entry)" : typeof value === "string" ? value : JSON.stringify(value);
  },
});

register_tool({
  name: "remember",
  description: "Store a value in shared memory under your own namespace (developer/<key>).",
  parameters: {
    type: "object",
    properties: { key: { type: "string" }, value: { type: "string" } },
    required: ["key", "value"],
  },
  execute: (argsJson) => {
    const { key, value } = JSON.parse(argsJson);
    memory.set(key, value);
    return `stored developer/${key}`;
  },
});

register_tool({
  name: "send_message",
  description: "Send a message to one team member (architect or reviewer).",
  parameters: {
    type: "object",
    properties: { to: { type: "string" }, content: { type: "string" } },
    required: ["to", "content"],
  },
  execute: (argsJson) => {
    const { to, content } = JSON.parse(argsJson);
    messages.send(to, content);
    return `sent to ${to}`;
  },
});

register_tool({
  name: "read_messages",
  description: "Read the messages team members sent you (each is returned once).",
  parameters: { type: "object", properties: {} },
  execute: () => messages.receive(),
});

register_tool({
  name: "spawn_task",
  description:
    "Queue a new task for a team member. It runs after your current task has finished " +
    "and after every task named in depends_on.",
  parameters: {
    type: "object",
    properties: {
      title: { type: "string" },
      description: { type: "string", description: "What to do; it becomes the assignee's prompt." },
      assignee: { type: "string", description: "architect, developer or reviewer" },
      depends_on: { type: "array", items: { type: "string" }, description: "Task ids, e.g. [\"review\"]." },
    },
    required: ["title", "description", "assignee"],
  },
  execute: (argsJson) => {
    const t = JSON.parse(argsJson);
    const id = tasks.spawn(
      JSON.stringify({ title: t.title, description: t.description, assignee: t.assignee, depends_on: t.depends_on || [] }),
    );
    return `queued task '${id}'`;
  },
});
