"""The ``hugind`` executable: a run the quick parser understands skips Typer.

Typer and click cost a cold ``hugind run`` tens of milliseconds to import,
as much as a script agent's whole run. ``cli_quick.parse_run`` reads the
command lines ``hugind run`` takes every day; anything else (another
command, ``--help``, an option it does not know, a value it is unsure of)
goes to the Typer application, so usage errors and help stay Typer's.
"""

from __future__ import annotations

import errno
import gc
import os
import sys

# Errors of a write that no retry fixes: a full disk or quota, a file too large, a dead device.
OUTPUT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _dispatch(argv: list[str]) -> int | None:
    """The exit code of a run the quick parser read; None after any other command."""
    from hugind import std_streams
    from hugind.errors import ExitCode

    gc.disable()  # until the start-up imports are done: see _started
    from hugind.cli_quick import parse_run

    quick = parse_run(argv, os.environ)
    if quick is not None:
        from hugind.run_command import import_run_stack, run_command

        import_run_stack()
        _started()
        return run_command(quick)
    from hugind.cli import app

    _started()
    stdout_before = std_streams.stdout_identity()
    try:
        app()
    except SystemExit as stop:
        # click (Typer's own copy of it) ends a command whose stdout reader left with a
        # silent exit 1, and marks that by wrapping stdout; rich (help, errors) by pointing
        # descriptor 1 at /dev/null. A run's case both: a run's quiet 141.
        wrapped = type(sys.stdout).__name__ == "PacifyFlushWrapper"
        if stop.code == 1 and (wrapped or std_streams.stdout_silenced_since(stdout_before)):
            std_streams.silence_stdout()
            sys.exit(ExitCode.OUTPUT_CLOSED)
        raise
    return None


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


def _refuse_closed_streams() -> None:
    """Closed standard descriptors get ``/dev/null`` before any file is opened (std_streams.py);
    a run whose stdout or stderr was closed is refused, since nothing it said could be seen."""
    from hugind import std_streams
    from hugind.errors import ExitCode

    closed = std_streams.fill_closed()
    if "standard input" in closed:
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the process's stdin, kept to the end
    unseen = [name for name in closed if name != "standard input"]
    if unseen:
        if "standard error" not in closed:
            sys.stderr.write(
                f"hugind: error: {' and '.join(unseen)} closed: nothing the command said could be seen "
                "(redirect it to /dev/null to discard it)\n"
            )
        sys.exit(ExitCode.USAGE)


def main() -> None:
    """The ``hugind`` executable: a run a warm server takes (hugind/warm) ends here with
    its child's status; anything else runs in this process."""
    from hugind.warm.client import attempt

    try:
        served = attempt(sys.argv)
    except KeyboardInterrupt:  # Ctrl-C before the server took the run: as a cold run's start
        from hugind.errors import ExitCode

        sys.stderr.write("hugind: interrupted\n")
        os._exit(ExitCode.CANCELLED)
    if served is not None:
        os._exit(served)
    main_here()


def main_here() -> None:
    """The command line, run in this process (a warm server's child calls this too)."""
    from hugind import process_end, std_streams
    from hugind.errors import ExitCode, HugindError

    code: int | str | None = 0
    quick_code: int | None = None  # a quick run's: nothing is left but the exit
    try:
        try:
            _refuse_closed_streams()
            from hugind import ctrl_c

            ctrl_c.install()  # Ctrl-C must also stop a guest that is computing
            quick_code = _dispatch(sys.argv[1:])
            sys.exit(quick_code)
        except KeyboardInterrupt:
            sys.stderr.write("hugind: interrupted\n")
            sys.exit(ExitCode.CANCELLED)
        except HugindError as err:  # raised outside a command's own handling
            if not err.quiet:
                sys.stderr.write(f"hugind: error: {err.message}\n")
            sys.exit(err.exit_code)
        except Exception as exc:
            # stdout's reader left (``| head``: quiet, as any tool SIGPIPE ends), or a write
            # to a standard stream failed (``--help > /dev/full``: the cause, no trace).
            reader_left = isinstance(exc, BrokenPipeError) and std_streams.stdout_reader_gone()
            if reader_left or (isinstance(exc, OSError) and exc.errno in OUTPUT_ERRNOS and exc.filename is None):
                lost = std_streams.output_lost(exc)
                std_streams.silence_stdout()
                if not lost.quiet:
                    sys.stderr.write(f"hugind: error: {lost.message}\n")
                sys.exit(lost.exit_code)
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
        dispatch = sys.modules.get("hugind.host.dispatch")
        if dispatch is not None and dispatch.ops_in_progress():
            process_end.end_forced(code)
        if quick_code is not None:  # a run the quick path knows all of: no shutdown if nothing changes
            process_end.end_early(code)


if __name__ == "__main__":
    main()
