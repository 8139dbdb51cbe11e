# The Python twin of examples/coder: it registers tools; the host runs the LLM
# loop and calls them back in the sandbox, each call checked by the policy in
# agent.yaml.
import hugind

hugind.set_system_prompt(
    "You are a careful coding assistant. Explore the workspace with your tools before answering. "
    "Quote file paths exactly. Answer concisely."
)


@hugind.tool(
    parameters={
        "type": "object",
        "properties": {"command": {"type": "string", "description": "The command line to run."}},
        "required": ["command"],
    }
)
async def run(args):
    """Run a read-only shell command (ls, cat, grep, wc, head, tail, sort, uniq) in the workspace."""
    r = await hugind.run_command_async(args["command"], detailed=True)
    status = "timed out" if r["timed_out"] else f"exit {r['exit_code']}"
    truncated = "\n[output truncated]" if r["truncated"] else ""
    return f"{r['stdout']}{r['stderr']}{truncated}\n[{status}]"


@hugind.tool(
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Path relative to the agent folder, e.g. workspace/app.py."}
        },
        "required": ["path"],
    }
)
def read_file(args):
    """Read the full contents of a file in the workspace."""
    return hugind.fs.read_text(args["path"])


@hugind.tool(
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory relative to the workspace, e.g. '.'."},
            "pattern": {"type": "string", "description": "A fixed string to look for."},
        },
        "required": ["path", "pattern"],
    }
)
async def search(args):
    """Search for a text pattern in the files under a directory; prints file:line: text."""
    # spawn passes arguments verbatim: no shell, so the pattern cannot inject commands.
    out = await hugind.spawn_async("grep", ["-rnF", "--", args["pattern"], args["path"]])
    return out or "no matches"
