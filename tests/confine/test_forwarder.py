"""forwarder.py in a network namespace the test makes (``unshare -r -n``), relaying to a real ChildNetProxy.

The command inside the namespace sees an empty network (its loopback is not
the host's): its only way to the host's loopback origin is the forwarder ->
Unix socket -> proxy -> policy path.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from hugind.confine.proxy import FORWARDER_PATH, ChildNetProxy, forwarder_argv, proxy_env
from tests.confine.proxy_helpers import TcpOrigin, free_port, make_engine, short_socket_path, unshare_works
from tests.support.http_server import RecordingServer, reply

UNSHARE = unshare_works()
namespaces = pytest.mark.skipif(UNSHARE is not None, reason=f"needs a network namespace: {UNSHARE}")
PORT = 3128  # any port: the namespace is empty
PY = [sys.executable, "-I", "-S"]


@pytest.fixture
def origin() -> Iterator[RecordingServer]:
    server = RecordingServer()

    def hello(h: BaseHTTPRequestHandler) -> None:
        reply(h, 200, b"hello from the host", {"Content-Type": "text/plain"})

    server.routes["/hello"] = hello
    yield server
    server.close()


@pytest.fixture
def tcp_origin() -> Iterator[TcpOrigin]:
    server = TcpOrigin("echo")
    yield server
    server.close()


@pytest.fixture
def proxy(tmp_path: Path, origin: RecordingServer, tcp_origin: TcpOrigin) -> Iterator[ChildNetProxy]:
    ips = [f"127.0.0.1:{origin.port}", f"127.0.0.1:{tcp_origin.port}"]
    with short_socket_path() as path, ChildNetProxy(make_engine(tmp_path, {"allowed_ips": ips}), path) as p:
        yield p


def confined(argv: list[str], socket_path: Path | str, *, namespaces: tuple[str, ...] = ("-r", "-n")) -> list[str]:
    return ["unshare", *namespaces, *forwarder_argv(PORT, socket_path, argv, python=sys.executable)]


def child_env() -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **proxy_env(PORT)}


def run(argv: list[str], timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, env=child_env(), capture_output=True, text=True, timeout=timeout)


def python_code(code: str, **values: object) -> list[str]:
    text = textwrap.dedent(code)
    for name, value in values.items():
        text = text.replace(name, repr(value))
    return [*PY, "-c", text]


# --- through the proxy, and only through it ---------------------------------------------------

INSIDE = """
    import fcntl, json, socket, struct, urllib.error, urllib.request
    out = {}
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    flags = struct.unpack_from("16xH", fcntl.ioctl(probe.fileno(), 0x8913, struct.pack("16sH22x", b"lo", 0)))[0]
    out["lo_up"] = bool(flags & 1)
    out["proxied"] = urllib.request.urlopen("http://127.0.0.1:%d/hello" % ORIGIN, timeout=10).read().decode()
    try:
        socket.create_connection(("127.0.0.1", ORIGIN), timeout=5)
        out["direct"] = "connected"
    except OSError as exc:
        out["direct"] = type(exc).__name__
    try:
        urllib.request.urlopen("http://127.0.0.1:%d/" % OTHER, timeout=10)
        out["other"] = "allowed"
    except urllib.error.HTTPError as exc:
        out["other"] = [exc.code, exc.headers["X-Hugind-Rule"]]
    print(json.dumps(out))
"""


@namespaces
def test_the_child_gets_out_only_through_the_proxy(proxy: ChildNetProxy, origin: RecordingServer) -> None:
    other = free_port()
    done = run(confined(python_code(INSIDE, ORIGIN=origin.port, OTHER=other), proxy.socket_path))
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["lo_up"]  # unshare -n leaves lo down: the forwarder brought it up
    assert out["proxied"] == "hello from the host"
    assert out["direct"] == "ConnectionRefusedError"  # the namespace's loopback is not the host's
    assert out["other"] == [403, "network.allowed_ips"]
    assert origin.paths() == ["/hello"]
    decisions = [(e["decision"], e["request"]["url"]) for e in proxy.engine.audit.entries]
    assert decisions == [
        ("allow", f"http://127.0.0.1:{origin.port}/hello"),
        ("deny", f"http://127.0.0.1:{other}/"),
    ]


TUNNEL = """
    import socket
    results = []
    for host in ("127.0.0.1", "::1"):
        try:
            sock = socket.create_connection((host, PORT), timeout=10)
        except OSError as exc:
            results.append(host + " " + type(exc).__name__)
            continue
        sock.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\\r\\n\\r\\n" % ECHO)
        head = b""
        while not head.endswith(b"\\r\\n\\r\\n"):
            head += sock.recv(1)
        sock.sendall(b"ping via " + host.encode())
        sock.shutdown(socket.SHUT_WR)
        body = b""
        while data := sock.recv(4096):
            body += data
        results.append(head.split(b"\\r\\n")[0].decode() + " | " + body.decode())
    print("\\n".join(results))
"""


@namespaces
def test_connect_tunnel_through_the_forwarder(proxy: ChildNetProxy, tcp_origin: TcpOrigin) -> None:
    done = run(confined(python_code(TUNNEL, PORT=PORT, ECHO=tcp_origin.port), proxy.socket_path))
    assert done.returncode == 0, done.stderr
    v4, v6 = done.stdout.splitlines()
    assert v4 == "HTTP/1.1 200 Connection established | ping via 127.0.0.1"
    # [::1] too, where the kernel has IPv6 (then the namespace's lo has ::1 once up)
    assert v6 in ("HTTP/1.1 200 Connection established | ping via ::1", "::1 OSError", "::1 ConnectionRefusedError")
    assert tcp_origin.accepted >= 1


BULK = """
    import hashlib, os, socket, threading
    payload = os.urandom(2 << 20)
    results = []
    def one():
        sock = socket.create_connection(("127.0.0.1", PORT), timeout=20)
        sock.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\\r\\n\\r\\n" % ECHO)
        head = b""
        while not head.endswith(b"\\r\\n\\r\\n"):
            head += sock.recv(1)
        def send():
            sock.sendall(payload)
            sock.shutdown(socket.SHUT_WR)
        sender = threading.Thread(target=send)
        sender.start()
        got = bytearray()
        while data := sock.recv(1 << 16):
            got += data
        sender.join()
        results.append(got == payload)
    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(results)
"""


@namespaces
def test_concurrent_bulk_tunnels_through_the_forwarder(proxy: ChildNetProxy, tcp_origin: TcpOrigin) -> None:
    done = run(confined(python_code(BULK, PORT=PORT, ECHO=tcp_origin.port), proxy.socket_path))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[True, True, True, True]"
    assert proxy.stats.bytes_down >= 4 * (2 << 20)


@namespaces
def test_unreachable_proxy_is_a_502_from_the_forwarder(tmp_path: Path) -> None:
    code = """
        import urllib.error, urllib.request
        try:
            urllib.request.urlopen("http://127.0.0.1:9/", timeout=10)
        except urllib.error.HTTPError as exc:
            print(exc.code, exc.read().decode())
    """
    done = run(confined(python_code(code), tmp_path / "nobody-listens.sock"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "502 forwarder: the hugind proxy is unreachable"


# --- the command's life: exit status, signals, children ---------------------------------------


@namespaces
@pytest.mark.parametrize(
    ("command", "status"),
    [
        (["true"], 0),
        (["sh", "-c", "exit 7"], 7),
        (["sh", "-c", "kill -KILL $$"], 128 + 9),
        # Python ignores SIGPIPE; a shell cannot undo an inherited ignore, so this shows it was reset.
        (["sh", "-c", "kill -PIPE $$; exit 0"], 128 + 13),
    ],
)
def test_exit_status_propagates(tmp_path: Path, command: list[str], status: int) -> None:
    done = run(confined(command, tmp_path / "p.sock"))
    assert done.returncode == status, done.stderr


@namespaces
def test_missing_command_is_127(tmp_path: Path) -> None:
    done = run(confined(["/nonexistent/program"], tmp_path / "p.sock"))
    assert done.returncode == 127 and "not found" in done.stderr


def test_usage_errors_are_125() -> None:
    for args in (["--port", "80"], ["--port", "x", "--unix", "s", "--", "true"], ["--bogus", "--", "true"]):
        done = subprocess.run([*PY, str(FORWARDER_PATH), *args], capture_output=True, text=True, timeout=10)
        assert done.returncode == 125 and done.stderr.startswith("forwarder: "), (args, done)


@namespaces
def test_forwarder_exits_when_the_command_does_even_with_children_left(tmp_path: Path) -> None:
    # PID 1 of a PID namespace: its exit ends the background sleep too (else the pipes would stay open).
    start = time.monotonic()
    argv = confined(["sh", "-c", "sleep 60 & exit 3"], tmp_path / "p.sock", namespaces=("-r", "-n", "-p", "-f"))
    done = run(argv)
    assert done.returncode == 3, done.stderr
    assert time.monotonic() - start < 10


@namespaces
def test_orphans_are_reaped_as_pid_1(tmp_path: Path) -> None:
    code = """
        import os, time
        for _ in range(3):
            pid = os.fork()
            if pid == 0:
                if os.fork() == 0:
                    time.sleep(0.1)
                    os._exit(0)  # an orphan by now: PID 1 (the forwarder) must reap it
                os._exit(0)
            os.waitpid(pid, 0)
        time.sleep(0.8)
        states = []
        for name in os.listdir("/proc"):
            if name.isdigit():
                with open("/proc/%s/stat" % name) as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
        print(os.getpid(), states.count("Z"))
    """
    ns = ("-r", "-n", "-p", "-f", "-m", "--mount-proc")
    done = run(confined(python_code(code), tmp_path / "p.sock", namespaces=ns))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["2", "0"]  # the command is PID 2; no zombie left


WAITS_FOR_SIGNAL = """
    import os, signal, time
    def handler(signum, frame):
        os.write(1, b"got %d\\n" % signum)  # not print: the signal may land inside print("ready")
        os._exit(42)
    signal.signal(signal.SIGTERM, handler)
    signal.signal(signal.SIGINT, handler)
    print("ready", flush=True)
    time.sleep(30)
"""


@namespaces
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_signals_reach_the_command(tmp_path: Path, signum: int) -> None:
    argv = confined(python_code(WAITS_FOR_SIGNAL), tmp_path / "p.sock")  # unshare execs: the pid is the forwarder
    with subprocess.Popen(argv, env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline() == "ready\n"
            proc.send_signal(signum)
            assert proc.wait(10) == 42, proc.stderr.read() if proc.stderr else ""
            assert proc.stdout.read() == f"got {int(signum)}\n"
        finally:
            proc.kill()


@namespaces
def test_a_signal_that_kills_the_command_is_128_plus_n(tmp_path: Path) -> None:
    argv = confined([*PY, "-c", "print('ready', flush=True); import time; time.sleep(30)"], tmp_path / "p.sock")
    with subprocess.Popen(argv, env=child_env(), stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
            proc.terminate()
            assert proc.wait(10) == 128 + signal.SIGTERM
        finally:
            proc.kill()
