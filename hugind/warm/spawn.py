"""Starting a warm server for the runs to come, from a run that found none.

A run starts one only when someone is likely to run again soon: at a
terminal, not under ``CI`` (``should_start``). The server is detached (a session of its own, standard streams on
``/dev/null``, working directory ``/``) and does not outlive its idle time.
It gets the interpreter, flags and ``sys.path`` of the client, so that it
computes the same key and imports the same code, and of the environment only
what the key covers, plus ``PATH`` and ``HOME``: a run's own environment,
secrets included, reaches only that run's child.
"""

from __future__ import annotations

import contextlib
import os
import sys

from hugind.warm.key import interpreter_environment

# Python that puts the client's sys.path in place before hugind is imported.
_BOOT = (
    "import json, os, sys; sys.path[:] = json.loads(os.environ.pop('HUGIND_WARM_SYS_PATH')); "
    "from hugind.warm.server import main; main(sys.argv[1])"
)


ON_VALUES = ("1", "on", "yes", "true")


def should_start(environ: dict[str, str] | os._Environ[str], interactive: bool) -> bool:
    """Whether a run that found no server starts one. A server outlives the run that
    started it, which someone at a terminal wants (their next runs start faster) and a CI
    job or a script does not (a process left behind): so only when the run is
    ``interactive`` (stdin or stderr a terminal) and ``CI`` is not set, or when
    ``HUGIND_WARM=1`` asks for one."""
    if environ.get("HUGIND_WARM", "").strip().lower() in ON_VALUES:
        return True
    if environ.get("CI", "").strip():
        return False
    return interactive


def start_server(key: str, package_dir: str) -> None:
    """Start a server for ``key`` in the background; any failure only means no warm start."""
    import json
    import signal
    import subprocess

    env = interpreter_environment(os.environ)
    for name in ("PATH", "HOME", "HUGIND_WARM_IDLE"):
        if name in os.environ:
            env[name] = os.environ[name]
    env["HUGIND_WARM_SYS_PATH"] = json.dumps(sys.path)
    # The package directory is not used by the server: it names the install in its command
    # line, for `hugind warm` to tell this install's servers from others' (control.py).
    argv = [sys.executable, *subprocess._args_from_interpreter_flags(), "-c", _BOOT, key, package_dir]
    null = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
    log = os.environ.get("HUGIND_WARM_LOG")  # the server's own errors, for whoever debugs it
    if log:
        null[2] = (os.POSIX_SPAWN_OPEN, 2, log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    # Spawned by a child that exits at once, so the server is never this run's child: a run
    # that outlives it would keep it as a zombie, and nothing here is left to reap. (No
    # thread runs yet in this process: the warm client imports nothing that starts one.)
    try:
        middle = os.fork()
    except OSError:
        return
    if middle == 0:
        try:
            os.posix_spawn(
                sys.executable,
                argv,
                env,
                file_actions=null,
                setsid=True,
                setsigmask=(),
                setsigdef=(signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGCHLD),
            )
        finally:
            os._exit(0)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(middle, 0)
