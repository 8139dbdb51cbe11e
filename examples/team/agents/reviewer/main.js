// The reviewer is a plain script agent: one ask_llm call over everything the
// team has stored, then the verdict goes to memory and to the team by message.
export default async function (input) {
  const task = input.team.task;
  const inbox = JSON.parse(messages.receive());
  const spec = JSON.parse(memory.get("architect/spec"));
  const code = JSON.parse(memory.get("developer/code"));
  if (spec === null || code === null) {
    throw new Error("nothing to review: architect/spec or developer/code is missing");
  }
  const prompt = [
    "You are the code reviewer of a small team.",
    'Reply with JSON only: {"verdict": "approve" or "changes", "comments": "<short review>"}.',
    "",
    `Task: ${task.description}`,
    "",
    memory.summary(),
    inbox.length ? "Messages to you:\n" + inbox.map((m) => `- from ${m.from}: ${m.content}`).join("\n") : "",
  ].join("\n");
  const reply = await ask_llm(prompt);
  let review;
  try {
    review = JSON.parse(reply);
  } catch (_) {
    review = { verdict: "unknown", comments: reply };
  }
  const verdict = String(review.verdict || "unknown");
  const comments = String(review.comments || "");
  memory.set("review", { verdict, comments });
  messages.send("developer", `Review ${verdict}: ${comments}`);
  messages.broadcast(`Review finished: ${verdict}`);
  return { verdict, messages_read: inbox.map((m) => m.from) };
}
