"""The record's first line: what was run, under which policy, with what inputs.

Written when the run's policy is known (the ``on_start`` hook, observer.py), checked
by replay before anything runs. ``code`` is the agent's digest as
``hugind check`` prints it (hugind/digest.py); ``policy`` is the digest of
the effective policy (after any preset and ``--strict``) with the agent's
folder left out, so a record replays from another checkout of the same
agent; ``manifest`` is the digest of the agent.yaml text. The declared env
is recorded by name only, never by value (scrub.py).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from hugind import __version__
from hugind.errors import ReplayDiverged
from hugind.replay.format import FORMAT_VERSION, MAGIC, digest_of

if TYPE_CHECKING:
    from hugind.observer import RunStart


def policy_digest(engine: Any) -> str:
    effective = dict(engine.to_json())
    effective.pop("agent_root", None)
    return digest_of(effective)


def manifest_digest(agent: Any) -> str | None:
    from hugind.build import manifest_text_of

    text = manifest_text_of(agent)
    return None if text is None else "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_header(start: RunStart, agent_path: str, code: str) -> dict[str, Any]:
    agent = start.agent
    return {
        "k": "header",
        "magic": MAGIC,
        "format": FORMAT_VERSION,
        "hugind": __version__,
        "agent": agent_path,
        "runtime": agent.runtime,
        "mode": agent.manifest.mode,
        "code": code,
        "manifest": manifest_digest(agent),
        "policy": policy_digest(start.engine),
        "args": list(start.args),
        "strict": start.strict,
        "policy_file": str(start.policy_file) if start.policy_file else None,
        "timeout": start.timeout,
        "fuel": start.fuel,
        "stream": start.stream,
        "env_names": sorted(start.env),
        "session": start.llm.session,
    }


def check_header(header: dict[str, Any], code: str, engine: Any, allow_changed: bool) -> list[str]:
    """Refuse (ReplayDiverged) a replay whose agent or policy is not the recorded one;
    with ``allow_changed`` return the differences as warnings instead."""
    differs = []
    if header.get("code") != code:
        differs.append(f"the agent's code differs from the record's ({code}, recorded {header.get('code')})")
    policy = policy_digest(engine)
    if header.get("policy") != policy:
        differs.append(
            f"the effective policy differs from the record's ({policy}, recorded {header.get('policy')}): "
            "agent.yaml's permissions, --policy or --strict changed"
        )
    if differs and not allow_changed:
        raise ReplayDiverged(f"cannot replay: {differs[0]} (--allow-changed replays up to the first divergent op)")
    return differs
