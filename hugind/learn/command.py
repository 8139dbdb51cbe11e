"""``hugind run --learn FILE``: the command-line side (the CLI only calls these two)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from hugind.errors import HugindError
from hugind.learn.collector import Usage, UsageCollector
from hugind.learn.derive import derive
from hugind.learn.render import check_writable, render, write_policy
from hugind.policy.fs import within
from hugind.policy.model import MiB

MAX_LISTED = 20


def start_learning(output: Path) -> UsageCollector:
    """Refuse an output that cannot be written before spending a run on it; the collector
    is the run's observer (hugind/observer.py)."""
    check_writable(output)
    return UsageCollector()


def _shown(path: Path, root: Path) -> str:
    return path.relative_to(root).as_posix() or "." if within(str(path), str(root)) else str(path)


def _listed(label: str, items: list[str]) -> list[str]:
    if not items:
        return []
    more = f" (+{len(items) - MAX_LISTED} more)" if len(items) > MAX_LISTED else ""
    return [f"{label}: {', '.join(items[:MAX_LISTED])}{more}"]


def usage_lines(usage: Usage, root: Path) -> list[str]:
    reads = sorted({_shown(u.path, root) for u in usage.fs if not u.write})
    writes = sorted({_shown(u.path, root) for u in usage.fs if u.write})
    hosts = sorted({f"{h.host}:{h.port}" for h in usage.hosts})
    lines = [
        *_listed("read", reads),
        *_listed("wrote", writes),
        *_listed("programs", sorted(usage.programs | usage.relative_programs)),
        *_listed("hosts", hosts),
        *_listed("mcp tools", sorted(usage.mcp_tools)),
    ]
    if usage.elapsed_s is not None:
        lines.append(f"elapsed {usage.elapsed_s:.2f} s")
    if usage.peak_memory_bytes:
        lines.append(f"peak guest memory {usage.peak_memory_bytes / MiB:.1f} MiB")
    return lines or ["nothing"]


def _mcp_policy(agent: Any, options: Any) -> Any:
    if not agent.manifest.mcp:
        return None
    from hugind.mcp import McpHub

    return McpHub.for_agent(agent, strict=options.strict, host_env={}, policy_file=options.policy_file).policy


def _server_paths(agent: Any, used: set[str]) -> list[Path]:
    """The files the MCP servers the run used start from (their program and path arguments)."""
    if not agent.manifest.mcp or not used:
        return []
    from hugind.mcp.config import parse_servers

    paths = []
    for spec in parse_servers(agent.manifest.mcp, agent.root, str(agent.root)):
        if spec.name not in used:
            continue
        for word in (spec.command, *spec.args):
            candidate = Path(word) if os.path.isabs(word) else agent.root / word
            if "/" in word and candidate.exists():
                paths.append(Path(os.path.realpath(candidate)))
    return paths


def _say(line: str) -> None:
    sys.stderr.write(f"hugind: learn: {line}\n")


def finish_learning(collector: UsageCollector, output: Path, agent: Any, options: Any) -> None:
    """After a run that ended normally: report denials, derive, write atomically (UsageError if not)."""
    usage, policy = collector.usage, collector.policy
    if policy is None:
        raise HugindError("--learn: the run ended before its policy was built")
    for denial in usage.denials:
        what = f"{denial.capability} {denial.op} {denial.what!r}"
        _say(f"denied by the starting policy, not learned: {what} ({denial.rule})")
    env_names = sorted(v.name for v in agent.manifest.env)
    learned = derive(
        usage,
        policy,
        name=agent.manifest.name,
        mcp=_mcp_policy(agent, options),
        env_names=env_names,
        server_paths=_server_paths(agent, usage.mcp_servers),
    )
    text = render(learned, output.name, usage_lines(usage, policy.agent_root))
    write_policy(output, text)
    for note in learned.notes:
        _say(f"note: {note}")
    _say(f"wrote {output}; check it with: hugind run {agent.root} --policy {output} --strict")
