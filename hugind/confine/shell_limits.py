"""A bubblewrap sandbox's rlimits set by ``/bin/sh``'s ``ulimit``, not by a Python per command.

A sandbox per command (network commands, MCP servers, ``HUGIND_ZYGOTE=0``) used
to start ``python -I -S limits.py`` inside just to call ``setrlimit``: about
25 ms of a 31 ms launch here. The shell the view already holds does the same
in about a millisecond: ``bwrap ... -- SH -c SCRIPT PWD PROGRAM ARGS``, where
SCRIPT is ``ulimit`` once per row of :data:`hugind.confine.limits.RLIMITS`
(soft and hard both), then ``exec "$@"``. The limits are set inside the
sandbox, by the process that becomes the program, as limits.py did: nothing
races, and ``RLIMIT_NPROC`` counts the sandbox's processes, not the user's.

A shell is trusted with this only where it does exactly what limits.py would,
else limits.py runs as before:

* it is dash's dialect (``-p`` for processes, ``-f``/``-c`` in 512-byte
  blocks, ``-d`` in KiB) and every value is a whole number of its unit;
  checked once per process by running the script outside any sandbox and
  reading back every limit and the whole environment (:func:`shell_ok`);
* the program's environment passes through the shell unchanged: every name
  a plain identifier (dash drops others) and none of the few dash resets
  (``IFS``, ``OPTIND``, ``PPID``); ``PWD``, which dash exports, is removed or
  set back to the planned value;
* the shell is inside the view.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys

from hugind.confine.limits import EXIT_LAUNCH_FAILED, RLIMITS, capped

SHELL = "/bin/sh"
# Variables dash sets for itself whatever the environment said.
RESET_BY_SHELL = frozenset({"IFS", "OPTIND", "PPID"})
FAILED = f"{{ echo 'hugind-confine: limits: the shell could not set them' >&2; exit {EXIT_LAUNCH_FAILED}; }}"
# Distinct values, a whole number of units each, to tell the options apart in the check.
CHECK_LIMITS = {"nproc": 977, "fsize": 3 << 20, "cpu": 97, "data": 768 << 20, "nofile": 97, "core": 3 << 10}
# Reads back each limit and the environment the program was given (/proc/self/environ:
# Python's own locale coercion may add LC_CTYPE to os.environ, not to that).
CHECK_PROGRAM = (
    "import resource; print(repr(({}, dict(e.split('=', 1) for e in "
    "open('/proc/self/environ').read().split(chr(0)) if e))))"
).format("{" + ", ".join(f"{name!r}: resource.getrlimit({row[0]})" for name, row in RLIMITS.items()) + "}")


def script(limits: dict[str, int], keep_pwd: bool) -> str | None:
    """The ``sh -c`` text for these (already capped) limits, or None when one is not a whole
    number of its option's unit. ``$0`` holds the planned PWD when ``keep_pwd``."""
    steps = []
    for name, value in limits.items():
        _, option, unit = RLIMITS[name]
        if value < 0 or value % unit:
            return None
        steps.append(f"ulimit -{option} {value // unit}")
    pwd = "PWD=$0; export PWD" if keep_pwd else "unset PWD"
    return f'{{ {" && ".join(steps) or ":"}; }} 2>/dev/null || {FAILED}; {pwd}; exec "$@"'


def env_passes(env: dict[str, str]) -> bool:
    """True when dash hands ``env`` to the program it execs unchanged (PWD aside: see script)."""
    return all(name.isascii() and name.isidentifier() and name not in RESET_BY_SHELL for name in env)


def words(limits: dict[str, int], env: dict[str, str], read: tuple[str, ...] | list[str]) -> list[str] | None:
    """The argv prefix that sets ``limits`` before the program inside a sandbox with ``read``,
    or None where only limits.py can do it exactly."""
    shell = _shell()
    if not _inside(shell, read) or not env_passes(env) or not shell_ok(shell):
        return None
    text = script(capped(limits), "PWD" in env)
    if text is None:
        return None
    return [shell, "-c", text, env.get("PWD", "sh")]


@functools.lru_cache(maxsize=1)
def _shell() -> str:
    """/bin/sh's real path, once per process (the system's shell, not a root of the policy)."""
    return os.path.realpath(SHELL)


def _inside(path: str, roots: tuple[str, ...] | list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


@functools.lru_cache(maxsize=4)
def shell_ok(shell: str) -> bool:
    """Whether ``shell`` sets every row of RLIMITS exactly as limits.py would and keeps the
    environment, both with PWD kept and removed: asked once per process, by running it."""
    limits = capped(CHECK_LIMITS)
    expected = {name: (value, value) for name, value in limits.items()}
    for env in ({"HUGIND_CHECK": "a b"}, {"HUGIND_CHECK": "a b", "PWD": "/nonexistent-pwd"}):
        text = script(limits, "PWD" in env)
        if text is None:
            return False
        argv = [shell, "-c", text, env.get("PWD", "sh"), sys.executable, "-I", "-S", "-c", CHECK_PROGRAM]
        try:
            proc = subprocess.run(argv, capture_output=True, env=env, cwd="/", timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
        if proc.returncode != 0 or proc.stdout.decode(errors="replace").strip() != repr((expected, env)):
            return False
    return True
