"""The agent the batch tests run, and small readers of what ``hugind batch`` writes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Echoes its args and env; the first arg picks a behaviour.
ECHO_JS = """
export default async (input) => {
  const [mode, ...rest] = input.args;
  if (mode === "fail") throw new Error("asked to fail: " + rest.join(" "));
  if (mode === "spin") { for (;;) {} }
  if (mode === "wait") { await new Promise((resolve) => setTimeout(resolve, 60000)); }
  if (mode === "peek") {
    try { fs.read_text("/etc/hostname"); return "read it"; } catch (e) { return "caught " + e.name; }
  }
  console.log("echo " + input.args.join(" "));
  return { args: input.args, env: input.meta.env };
};
"""

ECHO_MANIFEST = {
    "name": "echo",
    "entry_point": "main.js",
    "env": {"GREETING": {"required": False}, "TOKEN": {"required": False}},
}


def write_inputs(path: Path, lines: list[Any]) -> Path:
    """Each element a dict (written as JSON) or a raw string (written as is)."""
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


def read_results(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def events(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
