"""The ``hugind`` executable: a run the quick parser understands skips Typer.

Typer and click cost a cold ``hugind run`` tens of milliseconds to import,
as much as a script agent's whole run. ``cli_quick.parse_run`` reads the
command lines ``hugind run`` takes every day; anything else (another
command, ``--help``, an option it does not know, a value it is unsure of)
goes to the Typer application, so usage errors and help stay Typer's.
"""

from __future__ import annotations

import gc
import os
import sys
from contextlib import suppress

from hugind.errors import ExitCode, HugindError


def _dispatch(argv: list[str]) -> None:
    gc.disable()  # until the start-up imports are done: see _started
    from hugind.cli_quick import parse_run

    quick = parse_run(argv, os.environ)
    if quick is not None:
        from hugind.run_command import import_run_stack, run_command

        import_run_stack()
        _started()
        sys.exit(run_command(quick))
    from hugind.cli import app

    _started()
    app()


def _started() -> None:
    """The imports made ~100k objects that live until the process exits. With the
    collector off while they were made, they all sit in the youngest generation, and
    the first collection after would walk them all (~15 ms, measured on a script
    agent's run); frozen, no collection ever walks them. Imports a command makes
    later are frozen the same way (``run_command.importing``)."""
    from hugind import run_command

    run_command.FREEZE_IMPORTS = True
    gc.freeze()
    gc.enable()


def main() -> None:
    code: int | str | None = 0
    try:
        try:
            _dispatch(sys.argv[1:])
        except KeyboardInterrupt:
            sys.stderr.write("hugind: interrupted\n")
            sys.exit(130)
        except HugindError as err:  # raised outside a command's own handling
            sys.stderr.write(f"hugind: error: {err.message}\n")
            sys.exit(err.exit_code)
        except Exception:
            import traceback

            traceback.print_exc()
            sys.stderr.write("hugind: internal error (a bug in hugind; please report it with the trace above)\n")
            sys.exit(ExitCode.INTERNAL)
    except SystemExit as stop:
        code = stop.code
        raise
    finally:
        # The process ends next. Interpreter shutdown would run full garbage
        # collections over every object the imports made (wasmtime's bindings,
        # Typer, the policy), ~50 ms, longer than a script agent's whole run, to
        # free memory the OS takes back anyway. Frozen objects are left out of
        # those collections; atexit handlers, flushes and thread joins still run.
        gc.freeze()
        _leave_running_host_ops(code)


def _leave_running_host_ops(code: int | str | None) -> None:
    """End the process now if host ops a run left behind are still running.

    A fetch the agent aborted goes on in a daemon worker thread, possibly inside
    OpenSSL; the C library's exit handlers would then tear OpenSSL down under it
    (seen: SIGSEGV in libcrypto after the agent's last line). So: Python's exit
    handlers (cgroup sweep, audit files) and the flushes run, C's do not."""
    dispatch = sys.modules.get("hugind.host.dispatch")
    if dispatch is None or not dispatch.ops_in_progress():
        return
    import atexit

    if isinstance(code, str):
        sys.stderr.write(code + "\n")
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe: nothing more can be said
            stream.flush()
    os._exit(code or 0)


if __name__ == "__main__":
    main()
