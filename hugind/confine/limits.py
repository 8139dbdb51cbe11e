"""Set a command's rlimits, then become it: ``python -I -S limits.py [SPEC] -- PROGRAM ARGS``.

Standard library only, and only ``os``, ``resource`` and ``sys`` (it runs inside
every per-command bubblewrap sandbox, so its start is part of each command's
cost; the launcher imports it as a sibling for the same job). SPEC words:
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
RLIMITS = {
    "nproc": resource.RLIMIT_NPROC,
    "fsize": resource.RLIMIT_FSIZE,
    "cpu": resource.RLIMIT_CPU,
    "data": resource.RLIMIT_DATA,
    "nofile": resource.RLIMIT_NOFILE,
    "core": resource.RLIMIT_CORE,
}


def set_rlimits(limits: dict[str, int]) -> None:
    for name, value in limits.items():
        which = RLIMITS[name]
        _, hard = resource.getrlimit(which)
        cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(which, (cap, cap))


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
