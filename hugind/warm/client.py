"""The client side of warm start: hand this ``hugind run`` to a warm server.

Imported before anything else by the ``hugind`` executable, so it uses only
built-in modules: the point is to spend nothing that the server already spent.
``attempt`` returns the run's exit status, or None whenever the command should
run in this process instead: warm start off, no server yet (one is started for
the next run when the run is interactive: spawn.should_start), a refusal of
either side, anything unexpected before the child exists. Once the server
says the child started, the run is the child's: this process only forwards
signals and waits for its end, and never falls back.
"""

import _signal
import _socket
import os
import sys

from hugind.warm import key as warm_key
from hugind.warm import peer, wire

OFF_VALUES = ("0", "off", "no", "false")
# Signals a shell or a supervisor sends to stop or wake a command: the child gets them.
FORWARDED = ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
HANDSHAKE_TIMEOUT = 2.0
STARTED_TIMEOUT = 30.0  # from the request to the server's "started" (a fork, normally ~1 ms)


class Lost(Exception):
    """The server went away after the child started: the run's outcome is unknown."""


def wanted(argv: list[str], environ: dict[str, str] | os._Environ[str]) -> bool:
    """Whether this command line may be served warm at all."""
    if len(argv) < 2 or argv[1] != "run" or sys.platform != "linux":
        return False
    if environ.get("HUGIND_WARM", "1").strip().lower() in OFF_VALUES:
        return False
    options = argv[2 : argv.index("--")] if "--" in argv else argv[2:]
    if "--strict" in options:  # a strict run keeps its whole trust base in one process
        return False
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return False  # a debugger, profiler or coverage watches this process: the run must be in it
    for fd in (0, 1, 2):  # a closed one is entry.py's to handle (and refuse)
        try:
            os.fstat(fd)
        except OSError:
            return False
    return True


def _trace(message: str) -> None:
    """``HUGIND_WARM_TRACE=1``: say on stderr how this run was served (tests, and a user
    wondering why a run was not warm)."""
    if os.environ.get("HUGIND_WARM_TRACE"):
        sys.stderr.write(f"hugind: warm: {message}\n")
        sys.stderr.flush()


def attempt(argv: list[str]) -> int | None:
    if not wanted(argv, os.environ):
        return None
    import hugind

    package_dir = os.path.dirname(hugind.__file__)
    key = warm_key.compute(package_dir)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_SEQPACKET | _socket.SOCK_CLOEXEC)
    try:
        try:
            sock.connect(warm_key.address(key))
        except (ConnectionRefusedError, FileNotFoundError):
            from hugind.warm.spawn import should_start, start_server

            if not should_start(os.environ, os.isatty(0) or os.isatty(2)):
                _trace("no server: this run is cold, and starts none (not at a terminal, or CI is set)")
                return None
            _trace("no server: this run is cold, and starts one")
            start_server(key, package_dir)
            return None
        except OSError as err:
            _trace(f"cold: cannot connect ({err})")
            return None
        try:
            sock.settimeout(HANDSHAKE_TIMEOUT)
            if not _handshake(sock, argv, key):
                _trace("cold: the server refused")
                return None
        except (OSError, ValueError, peer.Mismatch) as err:
            _restore_signals()
            _trace(f"cold: {err}")
            return None
        # The request is sent: from here on the server may have started the child, so
        # this process must not run the command itself unless the server says it did not.
        try:
            return _wait(sock)
        except Lost as lost:
            sys.stderr.write(f"hugind: error: {lost} (HUGIND_WARM=0 runs without the warm server)\n")
            return 70
    finally:
        sock.close()


def _handshake(sock: _socket.socket, argv: list[str], key: str) -> bool:
    """True once the request is sent; False if either side refused before that."""
    server = peer.peer_pid(sock)
    mine = peer.proof_file()
    try:
        wire.send(sock, [b"hello", key.encode(), str(mine).encode()])
        fields, fds = wire.receive(sock)
        try:
            if fields[:1] == [b"refuse"]:
                raise peer.Mismatch(f"the server refused: {wire.reason(fields)}")
            if not fields or fields[0] != b"proof" or len(fds) != 1 or len(fields) != 2:
                return False
            peer.verify(mine, fds[0])
        finally:
            wire.close_all(fds)
        peer.compare(peer.context("self"), peer.context(server))
        answer = peer.prove(server, int(fields[1]))
    finally:
        os.close(mine)
    cwd = os.open(".", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        env = [k + b"=" + v for k, v in os.environb.items()]
        args = [os.fsencode(a) for a in argv]
        ignored, blocked = _signal_state()
        fields = [b"run", _main_package(), ignored, blocked, str(len(args)).encode(), *args, *env]
        wire.send(sock, fields, [answer, cwd, 0, 1, 2])
        # From here a signal goes to the child (queued until it exists). One that came before
        # raised KeyboardInterrupt here, or ended this process: the connection's end then
        # ends any child the server started.
        _forward_signals(sock)
    finally:
        os.close(answer)
        os.close(cwd)
    return True


def _signal_state() -> tuple[bytes, bytes]:
    """The signals this process ignores (``nohup``, a shell's background job) and blocks:
    an exec keeps both, so the child takes them on as the cold run would have."""
    ignored = [n for n in range(1, _signal.NSIG) if _ignored(n)]
    blocked = sorted(int(n) for n in _signal.pthread_sigmask(_signal.SIG_BLOCK, []))
    return ",".join(map(str, ignored)).encode(), ",".join(map(str, blocked)).encode()


def _ignored(signum: int) -> bool:
    try:
        return _signal.getsignal(signum) == _signal.SIG_IGN
    except (ValueError, OSError):
        return False


def _main_package() -> bytes:
    """``__main__``'s package: ``python -m hugind`` and the ``hugind`` script differ there, and
    click names the program by it in usage lines."""
    main = sys.modules.get("__main__")
    return (getattr(main, "__package__", None) or "").encode()


def _forward_signals(sock: _socket.socket) -> None:
    def send(signum: int) -> None:
        try:  # noqa: SIM105 - no contextlib on the client's path (its import costs ~3 ms)
            wire.send(sock, [b"signal", str(signum).encode()])
        except OSError:
            pass

    def forward(signum: int, _frame: object) -> None:
        send(signum)

    def suspend(_signum: int, _frame: object) -> None:
        """Ctrl-Z: the run stops with its client and goes on when the client does. (The
        child's own SIGTSTP would be discarded: its process group is orphaned.)"""
        send(_signal.SIGSTOP)
        _signal.signal(_signal.SIGTSTP, _signal.SIG_DFL)
        os.kill(os.getpid(), _signal.SIGTSTP)  # stops here until the shell continues it
        _signal.signal(_signal.SIGTSTP, suspend)
        send(_signal.SIGCONT)

    for name in FORWARDED:
        signum = getattr(_signal, name)
        if not _ignored(signum):  # an ignored one stays ignored, here and in the child
            _signal.signal(signum, forward)
    if not _ignored(_signal.SIGTSTP):
        _signal.signal(_signal.SIGTSTP, suspend)


def _restore_signals() -> None:
    """Undo _forward_signals (a handler it installed replaced SIG_DFL, or SIGINT's)."""
    for name in (*FORWARDED, "SIGTSTP"):
        signum = getattr(_signal, name)
        if _signal.getsignal(signum) not in (_signal.SIG_IGN, _signal.SIG_DFL, _signal.default_int_handler):
            _signal.signal(signum, _signal.default_int_handler if name == "SIGINT" else _signal.SIG_DFL)


def _wait(sock: _socket.socket) -> int | None:
    """The child's exit status; None if the server refused the request (nothing started).

    Until the server says the child started, this waits STARTED_TIMEOUT at most (a server
    stopped or stuck must not hang the command); it then ends as a lost run, not a cold
    one, since the child may exist."""
    sock.settimeout(STARTED_TIMEOUT)
    started = False
    while True:
        try:
            fields, _ = wire.receive(sock)
        except TimeoutError:
            raise Lost(f"the warm server did not start the run within {STARTED_TIMEOUT:.0f} s") from None
        except OSError as err:
            raise Lost(f"the warm server failed during the run ({err.strerror or err})") from None
        if not fields:
            raise Lost("the warm server ended during the run")
        if fields[0] == b"started":
            started = True
            sock.settimeout(None)
            _trace("served by a warm server")
        elif fields[0] == b"refuse" and not started:
            _restore_signals()
            _trace(f"cold: the server refused: {wire.reason(fields)}")
            return None
        elif fields[0] in (b"exit", b"killed") and len(fields) == 3:
            try:
                status, cpu = int(fields[1]), int(fields[2])
            except ValueError:
                raise Lost("the warm server sent a malformed end of the run") from None
            _trace(f"the run used {cpu / 1000:.3f} ms of CPU")
            if fields[0] == b"killed":
                _die_by(status)
            return status


def _die_by(signum: int) -> None:
    """End as the child ended: by the same signal, as a shell and ``wait`` would see it."""
    for name in FORWARDED:
        _signal.signal(getattr(_signal, name), _signal.SIG_DFL)
    try:
        _signal.signal(signum, _signal.SIG_DFL)
        _signal.pthread_sigmask(_signal.SIG_UNBLOCK, [signum])
        os.kill(os.getpid(), signum)
    except (OSError, ValueError):
        pass
    os._exit(128 + signum)
