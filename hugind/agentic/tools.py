"""Tool descriptions and the executor contract the loop dispatches to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, Union, runtime_checkable

from hugind.agentic.calls import ParsedCall


@dataclass(frozen=True)
class ToolSpec:
    """A tool as registered by the agent (``register_tool({name, description, parameters})``)."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolSpec:
        """From a register_tool definition or an OpenAI ``{"type": "function", ...}`` entry."""
        fn = data.get("function") if isinstance(data.get("function"), Mapping) else data
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            raise ValueError("a tool needs a non-empty string 'name'")
        params = fn.get("parameters", fn.get("input_schema"))
        if not isinstance(params, Mapping):
            params = {"type": "object", "properties": {}}
        description = fn.get("description")
        return cls(name, description if isinstance(description, str) else "", dict(params))

    @property
    def param_names(self) -> list[str]:
        props = self.parameters.get("properties")
        return [str(k) for k in props] if isinstance(props, Mapping) else []

    @property
    def required(self) -> list[str]:
        req = self.parameters.get("required")
        return [str(k) for k in req] if isinstance(req, list) else []

    def param_schema(self, param: str) -> Mapping[str, Any] | None:
        props = self.parameters.get("properties")
        if isinstance(props, Mapping) and isinstance(props.get(param), Mapping):
            return props[param]
        return None

    def to_openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.parameters),
            },
        }


@dataclass(frozen=True)
class ToolResult:
    """A result with metadata; executors may return plain strings instead."""

    content: str
    is_error: bool = False
    duration_s: float | None = None


ToolOutput = Union[str, ToolResult]


@runtime_checkable
class ToolExecutor(Protocol):
    def execute(self, calls: list[ParsedCall]) -> Sequence[ToolOutput]:
        """Run the calls (concurrently if it likes); return one result per call, in call order."""
        ...


ToolsSchema = Union[Sequence[ToolSpec], Mapping[str, ToolSpec], None]


def tools_by_name(tools: ToolsSchema) -> dict[str, ToolSpec]:
    if tools is None:
        return {}
    if isinstance(tools, Mapping):
        return dict(tools)
    return {t.name: t for t in tools}
