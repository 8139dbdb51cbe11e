"""hugind's one rlimit table, and setting a command's rlimits before it runs.

:data:`RLIMITS` is the only table of the rlimits a child gets: the launcher and
the zygote (stdlib-only scripts that load this file as a sibling) set them with
:func:`set_rlimits`; inside a bubblewrap sandbox a ``/bin/sh`` step sets them
with ``ulimit`` (:mod:`hugind.confine.shell_limits`, from this table's option
and unit columns), and where that shell cannot be trusted to do it exactly,
this file runs instead: ``python -I -S limits.py [SPEC] -- PROGRAM ARGS``.

Standard library only, and only ``os``, ``resource`` and ``sys``. SPEC words:
``NAME=VALUE`` for an rlimit (soft and hard both, capped by the hard limit
already in force), ``-LC_CTYPE`` for a variable to drop from the environment
(Python's locale coercion may have added it to this process's own). Any
failure is one line on stderr starting with ``hugind-confine:`` and exit
status 126, before the program runs.
"""

from __future__ import annotations

import os
import resource
import sys

EXIT_LAUNCH_FAILED = 126
# name: (resource, dash's ulimit option, the unit that option counts in bytes or items)
RLIMITS = {
    "nproc": (resource.RLIMIT_NPROC, "p", 1),
    "fsize": (resource.RLIMIT_FSIZE, "f", 512),
    "cpu": (resource.RLIMIT_CPU, "t", 1),
    "data": (resource.RLIMIT_DATA, "d", 1024),
    "nofile": (resource.RLIMIT_NOFILE, "n", 1),
    "core": (resource.RLIMIT_CORE, "c", 512),
}


def capped(limits: dict[str, int]) -> dict[str, int]:
    """``limits`` as this process can set them: each capped by the hard limit in force
    (an unprivileged process cannot raise it; the child gets the lower of the two)."""
    out = {}
    for name, value in limits.items():
        _, hard = resource.getrlimit(RLIMITS[name][0])
        out[name] = value if hard == resource.RLIM_INFINITY else min(value, hard)
    return out


def set_rlimits(limits: dict[str, int]) -> None:
    """Soft and hard both, so the command cannot raise them again."""
    for name, value in capped(limits).items():
        resource.setrlimit(RLIMITS[name][0], (value, value))


def spec_words(limits: dict[str, int], drop: list[str]) -> list[str]:
    """The SPEC for ``limits`` and the variables to ``drop`` (hugind's side)."""
    return [f"{name}={value}" for name, value in limits.items()] + [f"-{name}" for name in drop]


def main(args: list[str]) -> None:
    try:
        end = args.index("--")
        limits: dict[str, int] = {}
        drop: set[str] = set()
        for word in args[:end]:
            if word.startswith("-"):
                drop.add(word[1:])
            else:
                name, _, value = word.partition("=")
                limits[name] = int(value)
        argv = args[end + 1 :]
        if not argv:
            raise ValueError("no program")
        set_rlimits(limits)
        env = {k: v for k, v in os.environ.items() if k not in drop}
        os.execve(argv[0], argv, env)
    except Exception as exc:  # one line, never a traceback, and the program never runs
        text = getattr(exc, "strerror", None) or str(exc)
        os.write(2, f"hugind-confine: limits: {text}\n".encode(errors="replace"))
        os._exit(EXIT_LAUNCH_FAILED)


if __name__ == "__main__":
    main(sys.argv[1:])
