"""A JS agent that drives MCP from a plan given as its first argument, and how to run it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.runtime.helpers import Captured, run_captured

# Servers run confined: they see what the policy lets the agent see, so the
# reference servers' folder is a readable root of every test agent.
SERVERS_DIR = REPO / "tests" / "mcp_servers"


def with_server_roots(manifest: dict[str, Any], write: tuple[Path, ...] = ()) -> dict[str, Any]:
    perms = manifest.setdefault("permissions", {})
    fs = perms.setdefault("filesystem", {})
    fs.setdefault("read", []).append(str(SERVERS_DIR))
    if write:
        fs.setdefault("write", []).extend(str(p) for p in write)
    return manifest


# plan: {"list": bool, "calls": [[name, args], ...], "parallel": bool}
PLAN_AGENT = """
function failure(e) {
  return { kind: e.name, message: e.message };
}

// mcp_call_tool returns the text; its _async twin a Promise (for Promise.all).
async function call(name, args, parallel) {
  try {
    const text = parallel ? await mcp_call_tool_async(name, args) : mcp_call_tool(name, args);
    if (typeof text !== "string") throw new TypeError("mcp_call_tool did not return text");
    return { ok: JSON.parse(text) };
  } catch (e) {
    return failure(e);
  }
}

export default async function (input) {
  const plan = JSON.parse(input.args[0] || "{}");
  const out = {};
  if (plan.list) {
    try {
      out.tools = JSON.parse(mcp_list_tools());
    } catch (e) {
      out.list_error = failure(e);
    }
  }
  const calls = plan.calls || [];
  if (plan.parallel) {
    out.calls = await Promise.all(calls.map(([name, args]) => call(name, args, true)));
  } else {
    out.calls = [];
    for (const [name, args] of calls) out.calls.push(await call(name, args));
  }
  return out;
}
"""


def plan_agent(
    make_agent: Any, servers: list[dict], mcp_policy: dict | None = None, write: tuple[Path, ...] = (), **keys: Any
) -> Path:
    manifest: dict[str, Any] = {"name": "mcp-agent", "entry_point": "main.js", "mcp": servers, **keys}
    if mcp_policy is not None:
        manifest.setdefault("permissions", {})["mcp"] = mcp_policy
    return make_agent({"main.js": PLAN_AGENT}, manifest=with_server_roots(manifest, write))


def run_plan(agent: Path, plan: dict, **options: Any) -> tuple[dict, Captured]:
    out = run_captured(agent, json.dumps(plan), **options)
    assert out.result.has_result, out.stderr
    return out.result.value, out


def audit_entries(path: Path, capability: str = "mcp") -> list[dict]:
    if not path.exists():
        return []
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [e for e in entries if e["capability"] == capability]


def texts(result: dict) -> list[str]:
    return [block["text"] for block in result["content"] if block.get("type") == "text"]
