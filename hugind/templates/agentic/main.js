// An agentic agent: this module runs once to set the system prompt and
// register tools; then the host runs the LLM loop and calls the tools back in
// the sandbox. Each tool call is checked by the policy in agent.yaml.

// Written for small models too (issue #29: a 0.5B model told less invented
// answers): the notes are unknown until read, what to do first, how to answer.
// No example file name: small models read the example instead of asking.
set_system_prompt(
  "You answer questions about the user's notes, which are files in the notes folder. " +
    "You do not know what a note says until you read it. " +
    "First call the read_note tool with the file name the question gives. " +
    "Then, when you have the note's text, answer the question in one short sentence, " +
    "using only what the note says. Do not read the same note twice.",
);

register_tool({
  name: "read_note",
  description: "Read one note from the notes folder, by its file name.",
  parameters: {
    type: "object",
    properties: { name: { type: "string", description: "The note's file name, ending in .md." } },
    required: ["name"],
  },
  // Tools get their arguments as JSON text and return text for the model.
  execute: (argsJson) => {
    const { name } = JSON.parse(argsJson);
    if (typeof name !== "string" || name.includes("/")) return "error: give a file name, without a folder";
    return fs.read_text(`notes/${name}`); // a denial becomes an error the model sees
  },
});
