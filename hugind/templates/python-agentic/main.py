# An agentic agent in Python: this file runs once to set the system prompt and
# register tools; then the host runs the LLM loop and calls the tools back in
# the sandbox. Each tool call is checked by the policy in agent.yaml.
import hugind

# Written for small models too: the notes are unknown until read, what to do
# first, how to answer. No example file name: small models read the example
# instead of asking.
hugind.set_system_prompt(
    "You answer questions about the user's notes, which are files in the notes folder. "
    "You do not know what a note says until you read it. "
    "First call the read_note tool with the file name the question gives. "
    "Then, when you have the note's text, answer the question in one short sentence, "
    "using only what the note says. Do not read the same note twice."
)


@hugind.tool(
    parameters={
        "type": "object",
        "properties": {"name": {"type": "string", "description": "The note's file name, ending in .md."}},
        "required": ["name"],
    }
)
def read_note(args):
    """Read one note from the notes folder, by its file name."""
    # Tools get the model's arguments as a dict and return text for the model.
    name = args.get("name")
    if not isinstance(name, str) or "/" in name:
        return "error: give a file name, without a folder"
    return hugind.fs.read_text(f"notes/{name}")  # a denial becomes an error the model sees
