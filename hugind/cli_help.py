"""Help text that reads as a command line: ``AGENT``, ``--timeout NUMBER``, ``--strict``.

Typer 0.29 shows a required argument as ``{agent}`` in the usage line and
every option's Python type, a flag's included: ``--version <bool>``,
``--timeout <float>``. ``readable`` gives each parameter of a command (once,
when the command first lists its parameters) the names click has always
shown: an argument by its upper-case name, a value by what it is, a flag by
nothing. It changes only how a parameter is displayed; a Typer without these
display hooks (older releases print click's names already) is left alone.
"""

from __future__ import annotations

from typing import Any

# Typer's type label -> what the help shows after the option.
_VALUE_NAMES = {"path": "PATH", "int": "INTEGER", "float": "NUMBER", "str": "TEXT"}


def _no_type(ctx: Any = None) -> None:
    return None


def _value_name(param: Any, ctx: Any) -> str | None:
    try:
        label = param.display_type(ctx)
    except Exception:  # a type Typer cannot label: its own display stays
        return None
    if not isinstance(label, str):
        return None
    bare = label.strip("<>")
    return _VALUE_NAMES.get(bare, bare.upper())


def readable(params: list[Any], ctx: Any = None) -> list[Any]:
    """``params`` (Typer's parameters of one command), displayed as click would; returns them."""
    for param in params:
        if getattr(param, "_hugind_readable", False) or not hasattr(param, "display_type_rich"):
            continue
        param._hugind_readable = True
        if param.param_type_name == "argument":
            name = (param.metavar or param.name or "").upper()
            shown = name if param.nargs == 1 else f"{name}..."
            usage = shown if param.required else f"[{shown}]"
            param.metavar = shown  # the help's name column, and "Missing argument 'AGENT'"
            param.display_type_rich = _no_type
            if hasattr(param, "_usage_display_name"):
                param._usage_display_name = lambda usage=usage: usage
        elif getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.display_type_rich = _no_type
        elif param.metavar is None:
            value = _value_name(param, ctx)
            if value is not None:
                param.display_type_rich = lambda ctx=None, value=value: value
    return params
