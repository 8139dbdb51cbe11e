"""Plain conversion of the CLI's simple values, so ``hugind run`` does not import pydantic.

Typer (0.2x) converts every parameter that is not a flag through a pydantic
``TypeAdapter``, built when the command line is parsed: importing pydantic and
building the adapters costs a ``hugind run`` about 0.1 s before the agent
starts, more than everything the run itself does. hugind's commands take plain
values (a path, a word, a whole or decimal number, a list of words), and for
those the result Typer would compute is obvious. :class:`PlainCoercion`
computes it; any value it is not sure of (a malformed number, an unreadable
path, an annotation or constraint it does not know) goes to Typer's own
conversion, so what a command receives, and every error message, stays
Typer's. ``tests/runtime/test_cli_coldstart.py`` compares the two on the same
command lines.

Typer has no public hook for this: the converter is installed where Typer
caches its own (``_TyperParameter._runtime_param``), and only when that
attribute exists, so a Typer without it keeps working, at the old speed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, get_args, get_origin

_INT = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")

# Typer's defaults for a path parameter: anything else (exists=True, resolve_path, ...)
# is Typer's to check.
_PLAIN_PATH = {
    "exists": False,
    "file_okay": True,
    "dir_okay": True,
    "writable": False,
    "resolve_path": False,
    "allow_dash": False,
    "path_type": None,
}


class NotPlain(Exception):
    """The value is not one this module converts with certainty."""


def _plain_info(info: Any) -> bool:
    return all(getattr(info, k, None) is None for k in ("parser", "min", "max"))


def _path(value: str, info: Any) -> Path:
    if not value or "\0" in value or any(getattr(info, k, None) != v for k, v in _PLAIN_PATH.items()):
        raise NotPlain
    # Typer refuses an existing path it cannot read (readable=True by default).
    if info.readable and os.path.exists(value) and not os.access(value, os.R_OK):
        raise NotPlain
    return Path(value)


def _leaf(annotation: Any, value: Any, info: Any) -> Any:
    if not isinstance(value, str):
        raise NotPlain
    if annotation is str:
        return value
    if annotation is int and _INT.fullmatch(value):
        return int(value)
    if annotation is float and _DECIMAL.fullmatch(value):
        return float(value)
    if annotation is Path:
        return _path(value, info)
    raise NotPlain


def plain_value(annotation: Any, value: Any, info: Any) -> Any:
    """``value`` converted to ``annotation`` as Typer would; raises NotPlain when unsure."""
    if not _plain_info(info):
        raise NotPlain
    if get_origin(annotation) is list:
        items = get_args(annotation)
        if len(items) != 1 or not isinstance(value, (list, tuple)):
            raise NotPlain
        return [_leaf(items[0], v, info) for v in value]
    return _leaf(annotation, value, info)


class PlainCoercion:
    """Stands in for Typer's converter of one parameter; hands it whatever is not plain."""

    def __init__(self, param: Any) -> None:
        self._param = param

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multi = param.multiple or param.nargs == -1
        if value is None:  # not given: what Typer's converter returns without converting
            return () if multi else None
        descriptor = param.type_descriptor
        try:
            if descriptor.file_annotation is not None or (multi and isinstance(value, str)):
                raise NotPlain
            return plain_value(descriptor.annotation, value, descriptor.parameter_info)
        except (NotPlain, ValueError):
            return self._typer().coerce(value, param=param, ctx=ctx)

    def _typer(self) -> Any:
        from typer._coercion import build_runtime_param

        converter = build_runtime_param(self._param.type_descriptor)
        self._param._runtime_param = converter  # later values go straight to Typer
        return converter


def install(params: list[Any]) -> list[Any]:
    """Give each of a command's Typer parameters that has no converter yet the plain one;
    returns ``params``. (A flag left unset, ``--help`` included, is None: it is converted too.)"""
    for param in params:
        if getattr(param, "_runtime_param", False) is None and hasattr(param, "type_descriptor"):
            param._runtime_param = PlainCoercion(param)
    return params
