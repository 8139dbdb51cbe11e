"""``team.*``: shared memory, messages and task spawning for team members.

The run puts a ``TeamContext`` (``hugind.team.bus``) in ``ctx.services["team"]``
when the agent runs as a member of a team; the prelude then installs the
``memory``, ``messages`` and ``tasks`` globals, which call these ops. The
ops only adapt guest requests: namespaces, caps and task validation are
enforced by the bus and the workflow runner behind the context.
"""

from __future__ import annotations

from typing import Any

from hugind.errors import PermissionDenied
from hugind.host.registry import HostContext, Op, arg


def _team(ctx: HostContext) -> Any:
    team = ctx.services.get("team")
    if team is None:
        raise PermissionDenied("team: this run is not a member of a team")
    return team


def _memory_set(ctx: HostContext, args: dict[str, Any]) -> None:
    team = _team(ctx)
    # An undefined JS value is dropped by JSON.stringify: it is stored as null.
    team.bus.set(team.member, arg(args, "key", str), args.get("value"))


def _memory_get(ctx: HostContext, args: dict[str, Any]) -> Any:
    return _team(ctx).bus.get(arg(args, "key", str))


def _memory_all(ctx: HostContext, args: dict[str, Any]) -> dict[str, Any]:
    return _team(ctx).bus.all()


def _memory_summary(ctx: HostContext, args: dict[str, Any]) -> str:
    return _team(ctx).bus.summary()


def _send(ctx: HostContext, args: dict[str, Any]) -> None:
    team = _team(ctx)
    team.bus.send(team.member, arg(args, "to", str), arg(args, "content", str))


def _broadcast(ctx: HostContext, args: dict[str, Any]) -> int:
    team = _team(ctx)
    return team.bus.broadcast(team.member, arg(args, "content", str))


def _receive(ctx: HostContext, args: dict[str, Any]) -> list[dict[str, str]]:
    team = _team(ctx)
    return team.bus.receive(team.member)


def _spawn_task(ctx: HostContext, args: dict[str, Any]) -> str:
    return _team(ctx).spawn(arg(args, "task", dict))


OPS: tuple[Op, ...] = (
    Op("team.memory_set", _memory_set),
    Op("team.memory_get", _memory_get),
    Op("team.memory_all", _memory_all),
    Op("team.memory_summary", _memory_summary),
    Op("team.send", _send),
    Op("team.broadcast", _broadcast),
    Op("team.receive", _receive),
    Op("team.spawn_task", _spawn_task),
)
