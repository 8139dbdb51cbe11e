"""Installed skills: ``$HUGIND_HOME/skills/NAME/SKILL.md``.

Two stages: a one-line summary of each skill goes into the system prompt
(the catalog); the model loads a skill's full instructions on demand with the
built-in ``activate_skill`` tool. ``SKILL.md`` may start with YAML front
matter (``name``, ``description``); otherwise the directory names the skill
and its first paragraph is the summary.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from hugind.agentic.tools import ToolSpec
from hugind.llm.config import hugind_home
from hugind.yamlfile import load_yaml

ACTIVATE_SKILL = "activate_skill"
MAX_SKILL_BYTES = 512 * 1024
MAX_SUMMARY = 240
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


class UnknownSkillError(LookupError):
    pass


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    path: Path

    def instructions(self) -> str:
        """The full SKILL.md text without its front matter."""
        return _split_front_matter(_read(self.path))[1].strip()


@dataclass
class SkillSet:
    skills: dict[str, Skill] = field(default_factory=dict)
    root: Path | None = None

    @classmethod
    def load(cls, root: str | Path | None = None) -> SkillSet:
        """Every readable ``NAME/SKILL.md`` under ``root`` (default ``$HUGIND_HOME/skills``)."""
        base = Path(root) if root is not None else hugind_home() / "skills"
        found: dict[str, Skill] = {}
        try:
            entries = sorted(base.iterdir()) if base.is_dir() else []
        except OSError:
            entries = []
        for entry in entries:
            skill_file = entry / "SKILL.md"
            if entry.name.startswith(".") or not skill_file.is_file():
                continue
            skill = _load_skill(entry.name, skill_file)
            if skill is not None and skill.name not in found:
                found[skill.name] = skill
        return cls(found, base)

    def __bool__(self) -> bool:
        return bool(self.skills)

    def __len__(self) -> int:
        return len(self.skills)

    def __iter__(self) -> Iterator[Skill]:
        return iter(self.skills.values())

    @property
    def names(self) -> list[str]:
        return sorted(self.skills)

    def catalog(self) -> str:
        """The system-prompt section listing the skills (empty if none)."""
        if not self.skills:
            return ""
        lines = [
            "Installed skills (call activate_skill with a skill's name to load its full instructions before using it):"
        ]
        lines += [f"- {s.name}: {s.description}" if s.description else f"- {s.name}" for s in self]
        return "\n".join(lines)

    def activate(self, name: str) -> str:
        """The full instructions of ``name``; raises UnknownSkillError listing the known ones."""
        skill = self.skills.get(name.strip()) if isinstance(name, str) else None
        if skill is None:
            known = ", ".join(self.names) or "none"
            raise UnknownSkillError(f"unknown skill {name!r}; installed skills: {known}")
        try:
            text = skill.instructions()
        except OSError as exc:
            raise UnknownSkillError(f"skill {name!r} could not be read ({exc.strerror or exc})") from None
        return f"Skill '{skill.name}' instructions:\n\n{text}"

    def run_activate(self, args: Mapping[str, Any]) -> tuple[str, bool]:
        """The built-in tool: (result text, ok)."""
        name = args.get("name", args.get("skill"))
        if not isinstance(name, str) or not name.strip():
            return f"Error: activate_skill needs a 'name'; installed skills: {', '.join(self.names)}", False
        try:
            return self.activate(name), True
        except UnknownSkillError as exc:
            return f"Error: {exc}", False

    @staticmethod
    def tool_spec() -> ToolSpec:
        return ToolSpec(
            ACTIVATE_SKILL,
            "Load the full instructions of an installed skill.",
            {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "the skill's name"}},
                "required": ["name"],
            },
        )


def _read(path: Path) -> str:
    with path.open("rb") as handle:
        data = handle.read(MAX_SKILL_BYTES + 1)
    text = data[:MAX_SKILL_BYTES].decode("utf-8", "replace")
    return text + ("\n[... skill truncated]" if len(data) > MAX_SKILL_BYTES else "")


def _split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    text = text.lstrip("\ufeff")
    match = _FRONT.match(text)
    if not match:
        return {}, text
    try:
        meta = load_yaml(match.group(1))
    except yaml.YAMLError:
        return {}, text[match.end() :]
    return (dict(meta) if isinstance(meta, Mapping) else {}), text[match.end() :]


def _load_skill(dirname: str, path: Path) -> Skill | None:
    try:
        meta, body = _split_front_matter(_read(path))
    except OSError:
        return None
    name = meta.get("name") if isinstance(meta.get("name"), str) and meta["name"].strip() else dirname
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        description = _first_paragraph(body)
    return Skill(name.strip(), _one_line(description), path)


def _first_paragraph(body: str) -> str:
    lines: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped:
            if lines:
                break
            continue
        if stripped.startswith("#") and not lines:
            continue
        lines.append(stripped)
    return " ".join(lines)


def _one_line(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_SUMMARY else text[: MAX_SUMMARY - 3] + "..."
