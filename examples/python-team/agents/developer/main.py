# The developer: reads what others stored, stores its own work as
# developer/<key>, talks to the team and queues follow-up tasks.
import hugind
import hugind.team as team

hugind.set_system_prompt(
    "You are the developer of a small team. Read what you need from shared memory, do the work, "
    "store results with remember, and keep the team informed with send_message. "
    "When you are done, answer with a one-line summary."
)


@hugind.tool(
    description="Read a shared memory entry by its full key, e.g. architect/spec. Returns null if missing.",
    parameters={"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]},
)
def read_memory(args):
    value = team.memory_get(args["key"])
    # A string as it is, anything else as JSON (as the tool result of any non-string value).
    return "null (no such entry)" if value is None else value


@hugind.tool(
    description="Store a value in shared memory under your own namespace (developer/<key>).",
    parameters={
        "type": "object",
        "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
        "required": ["key", "value"],
    },
)
def remember(args):
    team.memory_set(args["key"], args["value"])
    return f"stored developer/{args['key']}"


@hugind.tool(
    description="Send a message to one team member (architect or reviewer).",
    parameters={
        "type": "object",
        "properties": {"to": {"type": "string"}, "content": {"type": "string"}},
        "required": ["to", "content"],
    },
)
def send_message(args):
    team.send(args["to"], args["content"])
    return f"sent to {args['to']}"


@hugind.tool(
    description="Read the messages team members sent you (each is returned once).",
    parameters={"type": "object", "properties": {}},
)
def read_messages(args):
    return team.receive()


@hugind.tool(
    description="Queue a new task for a team member. It runs after your current task has finished "
    "and after every task named in depends_on.",
    parameters={
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "description": {"type": "string", "description": "What to do; it becomes the assignee's prompt."},
            "assignee": {"type": "string", "description": "architect, developer or reviewer"},
            "depends_on": {"type": "array", "items": {"type": "string"}, "description": 'Task ids, e.g. ["review"].'},
        },
        "required": ["title", "description", "assignee"],
    },
)
def spawn_task(args):
    # The keys the model gave (a missing one stays missing, for the host to name), in the JS twin's order.
    spec = {key: args[key] for key in ("title", "description", "assignee") if key in args}
    task_id = team.spawn_task({**spec, "depends_on": args.get("depends_on") or []})
    return f"queued task '{task_id}'"
