"""Helpers for the child network proxy tests: engines, raw proxy clients, loopback origins.

Everything listens on 127.0.0.1 (or a Unix socket); nothing here connects anywhere else.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import h11

from hugind.policy import PolicyEngine, build_policy

Resolver = Callable[[str, int, float], list[str]]


def make_engine(root: Path, network: dict, resolver: Resolver | None = None) -> PolicyEngine:
    policy = build_policy({"network": {"allow": True, **network}}, runtime_fs_mode=None, agent_root=root)
    return PolicyEngine(policy, resolver=resolver)


def recording_resolver(table: dict[str, list[list[str]]], calls: list[str]) -> Resolver:
    """Answers ``table[host]`` in turn (one list of addresses per lookup); records every lookup."""

    def resolve(host: str, port: int, timeout: float) -> list[str]:
        calls.append(host)
        answers = table.get(host)
        if not answers:
            raise OSError("no such host")
        return answers[min(len(calls), len(answers)) - 1]

    return resolve


def refusing_resolver(calls: list[str]) -> Resolver:
    def resolve(host: str, port: int, timeout: float) -> list[str]:
        calls.append(host)
        raise AssertionError(f"the proxy resolved {host!r}")

    return resolve


@contextlib.contextmanager
def short_socket_path() -> Iterator[Path]:
    """A socket path in a fresh dir under /tmp: AF_UNIX paths must stay under 108 bytes."""
    folder = tempfile.mkdtemp(prefix="hgp-", dir="/tmp")
    try:
        yield Path(folder) / "proxy.sock"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def free_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def unix_client(path: Path, timeout: float = 5.0) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(str(path))
    return sock


def read_until_closed(sock: socket.socket, timeout: float = 5.0) -> bytes:
    sock.settimeout(timeout)
    out = bytearray()
    while True:
        data = sock.recv(65536)
        if not data:
            return bytes(out)
        out += data


def read_head(sock: socket.socket, timeout: float = 5.0) -> bytes:
    """Bytes up to and including the first blank line."""
    sock.settimeout(timeout)
    out = bytearray()
    while b"\r\n\r\n" not in out:
        data = sock.recv(1)
        if not data:
            break
        out += data
    return bytes(out)


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: bytes


def parse_response(data: bytes) -> Response:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    return Response(status, headers, body)


def ask(path: Path, raw: bytes, timeout: float = 5.0) -> Response:
    """Send ``raw`` to the proxy, read the whole answer (the proxy closes after it)."""
    with unix_client(path, timeout) as sock:
        sock.sendall(raw)
        return parse_response(read_until_closed(sock, timeout))


def read_responses(sock: socket.socket, methods: list[str], timeout: float = 5.0) -> tuple[list[Response], bytes]:
    """The responses to ``methods`` (the requests sent, in order) as h11 reads them, and any bytes after them.

    Stops early when the proxy ends the connection; the test then sees fewer responses.
    """
    sock.settimeout(timeout)
    reader = h11.Connection(h11.CLIENT)
    out: list[Response] = []
    for method in methods:
        reader.send(h11.Request(method=method, target="/", headers=[("Host", "proxy.test")]))
        reader.send(h11.EndOfMessage())
        head: h11.Response | None = None
        body = bytearray()
        while True:
            event = reader.next_event()
            if event is h11.NEED_DATA:
                reader.receive_data(sock.recv(65536))
            elif isinstance(event, h11.Response):
                head = event
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                return out, b""
        assert head is not None
        headers = {k.decode().lower(): v.decode() for k, v in head.headers}
        out.append(Response(head.status_code, headers, bytes(body)))
        if reader.our_state is not h11.DONE or reader.their_state is not h11.DONE:
            break
        reader.start_next_cycle()
    return out, read_until_closed(sock, timeout)


@dataclass
class TcpOrigin:
    """A raw TCP server on 127.0.0.1: ``echo`` echoes until EOF then closes; ``silent`` holds connections;
    ``record`` keeps what arrives until EOF or 0.3 s of quiet (in ``received``), then answers 200 "ok" and closes."""

    mode: str = "echo"
    accepted: int = 0
    conns: list[socket.socket] = field(default_factory=list)
    received: list[bytes] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port: int = self.sock.getsockname()[1]
        self._stop = False
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while not self._stop:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.accepted += 1
            self.conns.append(conn)
            if self.mode == "echo":
                threading.Thread(target=self._echo, args=(conn,), daemon=True).start()
            elif self.mode == "record":
                threading.Thread(target=self._record, args=(conn,), daemon=True).start()

    @staticmethod
    def _echo(conn: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := conn.recv(65536):
                conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)

    def _record(self, conn: socket.socket) -> None:
        data = bytearray()
        conn.settimeout(0.3)
        with contextlib.suppress(OSError):
            while chunk := conn.recv(65536):
                data += chunk
        self.received.append(bytes(data))
        with contextlib.suppress(OSError):
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            conn.shutdown(socket.SHUT_WR)

    def close(self) -> None:
        self._stop = True
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()
        for conn in self.conns:
            conn.close()


def unshare_works() -> str | None:
    """None if ``unshare -r -n`` can make a network namespace here, else why not."""
    if shutil.which("unshare") is None:
        return "unshare(1) is not installed"
    try:
        done = subprocess.run(["unshare", "-r", "-n", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unshare -r -n failed: {exc}"
    if done.returncode != 0:
        return f"unshare -r -n is not permitted here: {done.stderr.decode(errors='replace').strip()}"
    return None


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return predicate()
