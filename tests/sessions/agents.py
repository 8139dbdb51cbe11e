"""The agentic agent these tests run, and small helpers over the real CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.support.chat_server import Reply

UPPER_AGENT = {
    "main.js": """
    set_system_prompt("You are a test agent.");
    set_max_turns(5);
    register_tool({
      name: "upper",
      description: "Upper-case a text",
      parameters: {type: "object", properties: {text: {type: "string"}}, required: ["text"]},
      execute: (a) => JSON.parse(a).text.toUpperCase(),
    });
    """,
}


def manifest(name: str = "upper-agent", **extra: Any) -> dict[str, Any]:
    return {"name": name, "entry_point": "main.js", "mode": "agentic", "tool_format": "text", **extra}


def upper_call(text: str) -> Reply:
    return Reply(f'<tool_call>{{"name":"upper","args":{{"text":"{text}"}}}}</tool_call>')


def write_config(home: Path, backends: dict[str, Any]) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(yaml.safe_dump({"backends": backends}))


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
