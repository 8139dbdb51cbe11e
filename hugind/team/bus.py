"""What the members of a team share: namespaced memory and a message board.

One ``TeamBus`` serves every member of a team run; each member's sandbox
sees it through its own ``TeamContext`` (who am I, may I spawn tasks), which
the run puts in ``ctx.services["team"]`` for the ``team.*`` host ops.

Rules the host enforces, whatever the guest sends:

* a member writes only its own namespace: ``memory.set("spec", v)`` by
  ``architect`` stores ``architect/spec``; reading takes the full key;
* keys, values and messages are size-capped, and so is the whole store;
* ``receive`` hands a member its unread messages once and marks them read.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from hugind.errors import InvalidArgument, LimitHit, NotFound, PermissionDenied

MEMBER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_BAD_KEY_CHARS = re.compile(r"[\x00-\x1f\x7f/]")


@dataclass(frozen=True)
class BusLimits:
    max_key_chars: int = 128
    max_value_bytes: int = 256 * 1024  # one value, JSON-encoded
    max_memory_bytes: int = 16 * 1024 * 1024  # all values together
    max_entries: int = 4096
    max_message_bytes: int = 64 * 1024
    max_messages: int = 10_000  # stored, read or not
    summary_value_chars: int = 2000


def _encoded_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


class TeamBus:
    """Thread-safe shared memory and mailboxes of one team run."""

    def __init__(self, members: Sequence[str], limits: BusLimits | None = None) -> None:
        for name in members:
            if not MEMBER_NAME.match(name):
                raise ValueError(f"team member name {name!r} must be 1-64 letters, digits, '.', '_' or '-'")
        if len(set(members)) != len(members):
            raise ValueError("team member names must be unique")
        self.members: tuple[str, ...] = tuple(members)
        self.limits = limits or BusLimits()
        self._memory: dict[str, Any] = {}
        self._sizes: dict[str, int] = {}
        self._messages: list[dict[str, Any]] = []  # {from, to, content, read}
        self._lock = threading.Lock()

    # ---- memory -------------------------------------------------------------

    def qualify(self, member: str, key: str) -> str:
        """The stored name of ``key`` written by ``member``; refuses other namespaces."""
        if not isinstance(key, str) or not key:
            raise InvalidArgument("memory.set: the key must be a non-empty string")
        prefix = f"{member}/"
        local = key[len(prefix) :] if key.startswith(prefix) else key
        if "/" in local:
            owner = local.split("/", 1)[0]
            raise PermissionDenied(
                f"memory.set: '{member}' may write only its own namespace ('{member}/...'), "
                f"not '{owner}/...'; use a key without '/'"
            )
        if not local:
            raise InvalidArgument("memory.set: the key must be a non-empty string")
        if len(local) > self.limits.max_key_chars:
            raise InvalidArgument(f"memory.set: the key is longer than {self.limits.max_key_chars} characters")
        if _BAD_KEY_CHARS.search(local):
            raise InvalidArgument("memory.set: the key must not contain control characters")
        return prefix + local

    def set(self, member: str, key: str, value: Any) -> str:
        full = self.qualify(member, key)
        size = _encoded_size(value)
        limits = self.limits
        if size > limits.max_value_bytes:
            raise LimitHit(
                f"memory.set('{full}'): the value is {size} bytes, over the {limits.max_value_bytes} byte cap"
            )
        with self._lock:
            if full not in self._memory and len(self._memory) >= limits.max_entries:
                raise LimitHit(f"memory.set('{full}'): shared memory holds its maximum of {limits.max_entries} entries")
            total = sum(self._sizes.values()) - self._sizes.get(full, 0) + size
            if total > limits.max_memory_bytes:
                raise LimitHit(f"memory.set('{full}'): shared memory would exceed {limits.max_memory_bytes} bytes")
            self._memory[full] = value
            self._sizes[full] = size
        return full

    def get(self, key: str) -> Any:
        if not isinstance(key, str) or "/" not in key.strip("/"):
            raise InvalidArgument(
                f"memory.get takes a fully-qualified key 'agent/key' (e.g. 'architect/spec'), got {key!r}"
            )
        with self._lock:
            return self._memory.get(key)

    def all(self) -> dict[str, Any]:
        with self._lock:
            return {k: self._memory[k] for k in sorted(self._memory)}

    def summary(self) -> str:
        """Markdown: one section per member that has written something."""
        entries = self.all()
        lines = ["# Shared memory", ""]
        owners = [m for m in self.members if any(k.startswith(f"{m}/") for k in entries)]
        # Entries restored from an older run may name members no longer in the team.
        owners += sorted({k.split("/", 1)[0] for k in entries} - set(owners))
        if not owners:
            lines.append("_No entries yet._")
        for owner in owners:
            lines += [f"## {owner}", ""]
            for full, value in entries.items():
                if full.startswith(f"{owner}/"):
                    lines += self._summary_entry(full[len(owner) + 1 :], value)
            lines.append("")
        return "\n".join(lines).rstrip() + "\n"

    def _summary_entry(self, key: str, value: Any) -> list[str]:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        cap = self.limits.summary_value_chars
        if len(text) > cap:
            text = f"{text[:cap]}… ({len(text) - cap} more characters)"
        if "\n" not in text:
            return [f"- **{key}**: {text}"]
        return [f"- **{key}**:", *[f"  {line}" if line else "" for line in text.splitlines()]]

    # ---- messages -----------------------------------------------------------

    def _check_content(self, what: str, content: Any) -> str:
        if not isinstance(content, str):
            raise InvalidArgument(f"{what}: the content must be a string")
        size = len(content.encode())
        if size > self.limits.max_message_bytes:
            raise LimitHit(f"{what}: the message is {size} bytes, over the {self.limits.max_message_bytes} byte cap")
        return content

    def _post(self, what: str, sender: str, recipients: list[str], content: str) -> None:
        with self._lock:
            if len(self._messages) + len(recipients) > self.limits.max_messages:
                raise LimitHit(
                    f"{what}: the team's mailboxes hold their maximum of {self.limits.max_messages} messages"
                )
            for to in recipients:
                self._messages.append({"from": sender, "to": to, "content": content, "read": False})

    def send(self, sender: str, to: str, content: Any) -> None:
        if not isinstance(to, str) or not to:
            raise InvalidArgument("messages.send: 'to' must name a team member")
        if to not in self.members:
            raise NotFound(f"messages.send: '{to}' is not a member of this team (members: {', '.join(self.members)})")
        if to == sender:
            raise InvalidArgument("messages.send: an agent cannot send a message to itself")
        self._post("messages.send", sender, [to], self._check_content("messages.send", content))

    def broadcast(self, sender: str, content: Any) -> int:
        text = self._check_content("messages.broadcast", content)
        recipients = [m for m in self.members if m != sender]
        self._post("messages.broadcast", sender, recipients, text)
        return len(recipients)

    def receive(self, member: str) -> list[dict[str, str]]:
        with self._lock:
            unread = [m for m in self._messages if m["to"] == member and not m["read"]]
            for message in unread:
                message["read"] = True
        return [{"from": m["from"], "to": m["to"], "content": m["content"]} for m in unread]

    def messages(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(m) for m in self._messages]

    # ---- persistence --------------------------------------------------------

    def snapshot(self) -> dict[str, Any]:
        """A JSON-ready copy of everything shared (values are not copied deeply:
        they are never mutated in place)."""
        with self._lock:
            return {
                "memory": {k: self._memory[k] for k in sorted(self._memory)},
                "messages": [dict(m) for m in self._messages],
            }

    def restore(self, doc: dict[str, Any]) -> None:
        memory = doc.get("memory") or {}
        messages = doc.get("messages") or []
        with self._lock:
            self._memory = dict(memory)
            self._sizes = {k: _encoded_size(v) for k, v in self._memory.items()}
            self._messages = [
                {
                    "from": str(m["from"]),
                    "to": str(m["to"]),
                    "content": str(m["content"]),
                    "read": bool(m["read"]),
                }
                for m in messages
            ]


Spawner = Callable[[str, dict[str, Any]], str]


@dataclass
class TeamContext:
    """One member's view of the team: the service behind its ``team.*`` ops.

    ``spawner`` is set only when the run is a task of a workflow (it queues a
    new task and returns its id); ``task`` describes that task and is passed
    to the agent as ``input.team``.
    """

    member: str
    bus: TeamBus
    spawner: Spawner | None = None
    task: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        if self.member not in self.bus.members:
            raise ValueError(f"{self.member!r} is not a member of the team ({', '.join(self.bus.members)})")

    def describe(self) -> dict[str, Any]:
        """What the agent learns about its team in ``input.team``."""
        return {"agent": self.member, "members": list(self.bus.members), "task": self.task}

    def spawn(self, spec: Any) -> str:
        if self.spawner is None:
            raise PermissionDenied("tasks.spawn is only available to a task of a workflow run (hugind team)")
        if not isinstance(spec, dict):
            raise InvalidArgument("tasks.spawn takes an object {title, description, assignee, depends_on}")
        return self.spawner(self.member, spec)
