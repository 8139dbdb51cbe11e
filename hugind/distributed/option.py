"""``--ray [ADDRESS]``: an option whose value may be left out.

Typer's parser has no optional option values, so a command that takes
``--ray`` rewrites its arguments first: ``--ray`` followed by something that
is not a Ray address (another option, the workflow file, nothing) becomes
``--ray=local``. Addresses are recognised by shape (``auto``, ``local``,
``host:port``, ``ray://...``), which no workflow or agent path is likely to
have; ``--ray=ADDRESS`` is never ambiguous.
"""

from __future__ import annotations

import re

FLAG = "--ray"
BARE = "local"
_ADDRESS = re.compile(r"^(auto|local|ray://\S+|\[[0-9A-Fa-f:.]+\]:[0-9]{1,5}|[A-Za-z0-9_.-]+:[0-9]{1,5})$")


def looks_like_address(text: str) -> bool:
    return bool(_ADDRESS.match(text))


def fill_bare_ray(args: list[str]) -> list[str]:
    """``args`` with every bare ``--ray`` given its default value (stops at ``--``)."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg == "--":
            return out + args[i:]
        if arg == FLAG and (i + 1 == len(args) or not looks_like_address(args[i + 1])):
            out.append(f"{FLAG}={BARE}")
        else:
            out.append(arg)
    return out
