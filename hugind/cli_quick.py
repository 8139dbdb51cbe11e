"""``hugind run``'s everyday command lines, read without Typer.

``parse_run`` returns the ``RunArgs`` Typer would give the ``run`` command,
or None whenever it is not certain: another command, ``--help``, an option it
does not know or a short one, a flag given a value, an option given twice or
missing its value, a value that looks like an option, a value the plain
conversion (``cli_coerce``) would hand to Typer, a number out of its range
(``cli_numbers``). None sends the command line
to the Typer application, so errors and help are always Typer's.
``tests/runtime/test_cli_quick.py`` checks this table against the Typer
command's own parameters and both parsers against each other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hugind.cli_coerce import NotPlain, plain_value
from hugind.cli_numbers import problem
from hugind.run_command import RunArgs


@dataclass(frozen=True)
class QuickOption:
    """One option of ``hugind run`` the quick parser reads."""

    dest: str  # the run command's parameter
    kind: Any  # bool for a flag, else the value's type
    envvar: str | None = None


RUN_OPTIONS: dict[str, QuickOption] = {
    "--strict": QuickOption("strict", bool),
    "--json": QuickOption("json_events", bool),
    "--stream": QuickOption("stream", bool),
    "--policy": QuickOption("policy", Path),
    "--audit": QuickOption("audit", Path),
    "--fuel": QuickOption("fuel", int),
    "--timeout": QuickOption("timeout", float),
    "--backend": QuickOption("backend", str, "HUGIND_BACKEND"),
    "--model": QuickOption("model", str, "HUGIND_MODEL"),
    "--expect": QuickOption("expect", str),
    "--record": QuickOption("record", Path),
    "--learn": QuickOption("learn", Path),
    "--resume": QuickOption("resume", str),
}


class _Unsure(Exception):
    pass


class _PlainInfo:
    """Typer's defaults for a parameter declared with nothing but a help text."""

    parser = min = max = path_type = None
    exists = writable = resolve_path = allow_dash = False
    file_okay = dir_okay = readable = True


def _convert(kind: Any, value: str) -> Any:
    try:
        return plain_value(kind, value, _PlainInfo)
    except (NotPlain, ValueError):
        raise _Unsure from None


def parse_run(argv: list[str], environ: Mapping[str, str]) -> RunArgs | None:
    if not argv or argv[0] != "run":
        return None
    try:
        return _parse(argv[1:], environ)
    except _Unsure:
        return None


def _parse(tokens: list[str], environ: Mapping[str, str]) -> RunArgs:
    given: dict[str, Any] = {}
    positional: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            positional.extend(tokens[i:])
            break
        if not token.startswith("-") or token == "-":
            positional.append(token)
            continue
        name, eq, inline = token.partition("=")
        option = RUN_OPTIONS.get(name)
        if option is None or option.dest in given:
            raise _Unsure  # unknown, short, --help, or repeated: Typer decides
        if option.kind is bool:
            if eq:
                raise _Unsure
            given[option.dest] = True
            continue
        if eq:
            value = inline
        elif i < len(tokens) and not tokens[i].startswith("-"):
            value = tokens[i]
            i += 1
        else:
            raise _Unsure
        converted = _convert(option.kind, value)
        if problem(name, converted) is not None:
            raise _Unsure  # out of range: Typer's callback says so (exit 2)
        given[option.dest] = converted
    if not positional:
        raise _Unsure
    for option in RUN_OPTIONS.values():
        if option.envvar and option.dest not in given and environ.get(option.envvar):
            given[option.dest] = _convert(option.kind, environ[option.envvar])
    return RunArgs(agent=_convert(Path, positional[0]), args=[_convert(str, a) for a in positional[1:]], **given)
