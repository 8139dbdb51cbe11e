# The architect: its task's description is the user prompt; its only way to
# hand work on is the team's shared memory (stored as architect/<key>).
import hugind
import hugind.team as team

hugind.set_system_prompt(
    "You are the software architect of a small team. Write precise, short specifications. "
    "Store the specification with save_spec, then answer with a one-line summary."
)


@hugind.tool(
    description="Store the specification in shared memory (as architect/spec) for the developer and reviewer.",
    parameters={
        "type": "object",
        "properties": {"spec": {"type": "string", "description": "The full specification text (markdown)."}},
        "required": ["spec"],
    },
)
def save_spec(args):
    spec = args["spec"]
    team.memory_set("spec", spec)
    # Counted as the JS twin counts (UTF-16 code units), so both report the same length.
    return f"saved architect/spec ({len(spec.encode('utf-16-le')) // 2} characters)"


@hugind.tool(
    description="Read the messages other team members sent you (each is returned once).",
    parameters={"type": "object", "properties": {}},
)
def read_messages(args):
    return team.receive()  # a list: the model reads it as JSON, as the JS twin's
