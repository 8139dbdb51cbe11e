"""Warm start (hugind/warm): a run served by a warm server is the run a cold one would be,
and the warm path is no road out of the caller's confinement.

Every test runs the real ``hugind`` executable in a subprocess, with a warm key of its
own (so a server of another test, a benchmark or a shell is never used) and
``HUGIND_WARM_TRACE=1`` (each run says on stderr how it was served). Servers started
here are ended at the end of each test.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from hugind.warm import client, peer, wire
from hugind.warm import key as warm_key
from tests.support.warm import end_servers, servers

REPO = Path(__file__).resolve().parents[2]
TRACE = "hugind: warm: "
SERVED = TRACE + "served by a warm server"
ECHO = """
function readAll() {
  const chunks = []; let total = 0;
  for (;;) {
    const buf = new Uint8Array(4096);
    const n = Javy.IO.readSync(0, buf);
    if (n === 0) break;
    chunks.push(buf.subarray(0, n)); total += n;
  }
  const all = new Uint8Array(total); let off = 0;
  for (const c of chunks) { all.set(c, off); off += c.length; }
  return new TextDecoder().decode(all);
}
export default (input) => ({args: input.args, stdin: readAll(), env: input.meta.env});
"""
SLEEPER = "export default async () => { await new Promise((r) => setTimeout(r, 60000)); return 1; };"


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(p) for p in f.read().split()]
    except OSError:
        return []


@pytest.fixture
def warm(tmp_path: Path):
    """Run ``hugind`` with a warm key of this test's own; end its servers afterwards."""
    key = f"test-{uuid.uuid4().hex[:12]}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("HUGIND_WARM")}
    # HUGIND_WARM=1: these runs are not at a terminal, and must start a server all the same.
    env.update(HUGIND_WARM="1", HUGIND_WARM_KEY=key, HUGIND_WARM_TRACE="1", HUGIND_WARM_IDLE="30")

    class Warm:
        def __init__(self) -> None:
            self.key = key
            self.env = env

        def run(
            self, *args: str, stdin: bytes = b"", cwd: Path = REPO, preexec_fn=None, **extra: str
        ) -> subprocess.CompletedProcess:
            return subprocess.run(
                [sys.executable, "-m", "hugind", *args],
                input=stdin,
                capture_output=True,
                env={**env, **extra},
                cwd=cwd,
                timeout=120,
                preexec_fn=preexec_fn,
            )

        def start_server(self, *args: str, cwd: Path = REPO) -> None:
            """A first run (cold) starts the server; wait until a run is served."""
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                proc = self.run(*args, cwd=cwd)
                if SERVED.encode() in proc.stderr:
                    return
                time.sleep(0.2)
            raise AssertionError("no warm server came up")

        def servers(self) -> list[int]:
            return servers(key)

    yield Warm()
    end_servers(key)


def _untraced(stderr: bytes) -> bytes:
    return b"".join(line for line in stderr.splitlines(keepends=True) if not line.startswith(TRACE.encode()))


def _both(warm, *args: str, stdin: bytes = b"", cwd: Path = REPO) -> tuple:
    hot = warm.run(*args, stdin=stdin, cwd=cwd)
    cold = warm.run(*args, stdin=stdin, cwd=cwd, HUGIND_WARM="0")
    assert SERVED.encode() in hot.stderr, hot.stderr
    assert TRACE.encode() not in cold.stderr
    return hot, cold


@pytest.mark.parametrize(
    "args",
    [
        ("run", "examples/hello", "--", "world"),
        ("run", "examples/hello", "--json", "--", "two words", "--flag"),
        ("run", "examples/does-not-exist"),  # a usage error: exit 2 and its message
        ("run", "examples/hello", "--fuel", "1000"),  # the engine runs out of fuel
        ("run", "--help"),  # not the quick path: Typer's help, in the child
        ("run", "examples/hello", "--timeout", "-1"),  # Typer's own usage error
    ],
)
def test_a_warm_run_is_byte_identical_to_a_cold_one(warm, args):
    warm.start_server("run", "examples/hello")
    hot, cold = _both(warm, *args)
    assert (hot.returncode, hot.stdout, _untraced(hot.stderr)) == (cold.returncode, cold.stdout, cold.stderr)


def test_the_child_takes_the_clients_stdin_argv_env_and_directory(warm, tmp_path):
    agent = tmp_path / "echo"
    agent.mkdir()
    (agent / "main.js").write_text(ECHO)
    (agent / "agent.yaml").write_text("name: echo\nentry_point: main.js\nenv: [WARM_TEST_TOKEN]\n")
    warm.start_server("run", "echo", cwd=tmp_path)  # python -m puts the directory on sys.path: a key of its own
    stdin = "ünïcode\n".encode() * 5000  # larger than a pipe's buffer
    hot = warm.run("run", "echo", "--", "a b", "--x", stdin=stdin, cwd=tmp_path, WARM_TEST_TOKEN="t-1")
    assert SERVED.encode() in hot.stderr, hot.stderr
    assert hot.returncode == 0, hot.stderr
    assert json.loads(hot.stdout) == {
        "args": ["a b", "--x"],
        "stdin": stdin.decode(),
        "env": {"WARM_TEST_TOKEN": "t-1"},
    }


def test_a_runs_environment_never_reaches_the_server(warm):
    warm.start_server("run", "examples/hello")
    hot = warm.run("run", "examples/hello", WARM_TEST_SECRET="s3cr3t-value")
    assert SERVED.encode() in hot.stderr
    (server,) = warm.servers()
    with open(f"/proc/{server}/environ", "rb") as f:
        environ = f.read()
    assert b"s3cr3t-value" not in environ
    assert b"WARM_TEST_SECRET" not in environ


def _sleeping_run(tmp_path: Path, env: dict[str, str], **popen) -> subprocess.Popen:
    """A run whose agent waits a minute: there is time to signal it."""
    script = tmp_path / "sleeper.js"
    script.write_text(SLEEPER)
    return subprocess.Popen(
        [sys.executable, "-m", "hugind", "run", str(script)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=REPO,
        **popen,
    )


def _child_of(server: int) -> int:
    """The one run the server has forked, once it has."""
    deadline = time.monotonic() + 20
    while not _children(server) and time.monotonic() < deadline:
        time.sleep(0.05)
    (child,) = _children(server)
    return child


def _interrupt(sig: int, tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = _sleeping_run(tmp_path, env)
    time.sleep(1.5)  # started, and inside the agent's wait
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_to_the_client_ends_the_run_as_it_ends_a_cold_one(warm, tmp_path, sig):
    warm.start_server("run", "examples/hello")
    hot = _interrupt(sig, tmp_path, warm.env)
    cold = _interrupt(sig, tmp_path, {**warm.env, "HUGIND_WARM": "0"})
    assert SERVED.encode() in hot.stderr, hot.stderr
    assert (hot.returncode, hot.stdout, _untraced(hot.stderr)) == (cold.returncode, cold.stdout, cold.stderr)
    assert hot.returncode == (130 if sig == signal.SIGINT else -signal.SIGTERM)


def test_a_killed_client_takes_its_run_with_it(warm, tmp_path):
    warm.start_server("run", "examples/hello")
    (server,) = warm.servers()
    proc = _sleeping_run(tmp_path, warm.env)
    child = _child_of(server)
    proc.kill()
    proc.communicate(timeout=10)
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{child}")


def test_a_client_whose_limits_differ_runs_cold(warm):
    import resource

    warm.start_server("run", "examples/hello")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)

    def lower() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 512), min(hard, 512)))

    proc = warm.run("run", "examples/hello", preexec_fn=lower)
    assert proc.returncode == 0, proc.stderr
    assert b"limits differs" in proc.stderr
    assert SERVED.encode() not in proc.stderr


def _landlocked() -> None:
    """A Landlock domain that handles TCP connects and nothing else, applied without
    no_new_privs (root may): everything /proc shows stays the server's, only the domain differs."""
    from hugind.confine import landlock

    libc = ctypes.CDLL(None, use_errno=True)
    attr = landlock._RulesetAttr()
    attr.handled_access_net = landlock.NET_CONNECT_TCP
    fd = libc.syscall(landlock.SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if fd < 0 or libc.syscall(landlock.SYS_RESTRICT_SELF, fd, 0) != 0:
        os._exit(99)


def _landlock_without_nnp_possible() -> bool:
    from hugind.confine import landlock

    return os.geteuid() == 0 and landlock.abi_version() >= 4


@pytest.mark.skipif(not _landlock_without_nnp_possible(), reason="needs root and Landlock ABI >= 4")
def test_a_client_in_a_landlock_domain_is_not_served(warm):
    warm.start_server("run", "examples/hello")
    proc = warm.run("run", "examples/hello", "--", "world", preexec_fn=_landlocked)
    assert proc.returncode == 0, proc.stderr
    assert SERVED.encode() not in proc.stderr
    assert b"Permission denied" in proc.stderr  # it could not inspect the server: no ptrace access


@pytest.mark.skipif(not _landlock_without_nnp_possible(), reason="needs root and Landlock ABI >= 4")
def test_a_server_in_a_landlock_domain_serves_no_one(warm):
    """A server started inside a domain (as a confined command could try to) refuses a client
    outside it: it cannot open the client's proof file."""
    code = (
        "import sys; sys.path[:] = " + repr([str(REPO), *sys.path[1:]]) + "\n"
        "from hugind.warm.server import main; main(sys.argv[1])"
    )
    probe = warm.run("run", "examples/hello")  # cold: no server yet; learn the key the client computes
    assert b"no server" in probe.stderr
    time.sleep(1)
    for pid in warm.servers():  # the one that run started: replaced by a landlocked one
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.2)
    key = _client_key(warm)
    server = subprocess.Popen([sys.executable, "-c", code, key], env=warm.env, preexec_fn=_landlocked, cwd="/")
    try:
        time.sleep(3)  # its imports
        proc = warm.run("run", "examples/hello", "--", "world")
        assert proc.returncode == 0, proc.stderr
        assert SERVED.encode() not in proc.stderr
        assert b"cold" in proc.stderr
    finally:
        server.kill()
        server.wait()


def _client_key(warm) -> str:
    """The key ``python -m hugind`` computes in REPO with warm's environment (its
    ``__main__`` drops the working directory from sys.path, as ``del`` does here)."""
    code = (
        "import os, sys; del sys.path[0]; import hugind; from hugind.warm import key; "
        "print(key.compute(os.path.dirname(hugind.__file__)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, env=warm.env, cwd=REPO, check=True)
    return out.stdout.decode().strip()


def test_an_impostor_that_cannot_prove_itself_gets_nothing(warm):
    """Something else bound the server's name (as a confined command could): it answers the
    hello with a file that is not the client's. The client runs cold and never sends its
    request (argv, environment, descriptors)."""
    key = _client_key(warm)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(warm_key.address(key))
    listener.listen(1)
    received: list[list[bytes]] = []

    import threading

    def impostor() -> None:
        conn, _ = listener.accept()
        with conn:
            received.append(wire.receive(conn)[0])
            fake = os.memfd_create("not-the-clients")
            wire.send(conn, [b"proof", b"3"], [fake])
            os.close(fake)
            conn.settimeout(5)
            with contextlib.suppress(OSError):
                received.append(wire.receive(conn)[0])

    thread = threading.Thread(target=impostor)
    thread.start()
    try:
        proc = warm.run("run", "examples/hello", "--", "world", WARM_TEST_SECRET="never-sent")
        thread.join(10)
    finally:
        listener.close()
    assert proc.returncode == 0, proc.stderr
    assert b"Hello, world!" in proc.stdout
    assert SERVED.encode() not in proc.stderr
    # Refused by the proof comparison itself (the memfd is not the one the client sent), not
    # by a later check of the peer's context.
    assert (TRACE + "cold: the peer's proof is not this connection's file\n").encode() in proc.stderr, proc.stderr
    assert received[0][0] == b"hello"
    assert all(not fields or fields[0] != b"run" for fields in received[1:])
    assert not any(b"never-sent" in field for fields in received for field in fields)


def test_a_server_whose_code_changed_refuses_and_is_replaced(warm, tmp_path):
    """A directory on sys.path changing (an install, an upgrade) makes the server stale."""
    extra = tmp_path / "site"
    extra.mkdir()
    env = {"PYTHONPATH": f"{REPO}{os.pathsep}{extra}"}
    deadline = time.monotonic() + 30
    while SERVED.encode() not in warm.run("run", "examples/hello", **env).stderr:
        assert time.monotonic() < deadline, "no warm server came up"
        time.sleep(0.2)
    (extra / "newly_installed.py").write_text("")
    stale = warm.run("run", "examples/hello", "--", "world", **env)
    assert stale.returncode == 0 and b"Hello, world!" in stale.stdout
    assert b"stale" in stale.stderr, stale.stderr
    deadline = time.monotonic() + 30
    while SERVED.encode() not in warm.run("run", "examples/hello", **env).stderr:
        assert time.monotonic() < deadline, "no fresh server came up"
        time.sleep(0.2)


@pytest.mark.parametrize(
    ("argv", "environ", "expected"),
    [
        (["hugind", "run", "a"], {}, True),
        (["hugind", "run", "a"], {"HUGIND_WARM": "0"}, False),
        (["hugind", "run", "a"], {"HUGIND_WARM": "off"}, False),
        (["hugind", "run", "--strict", "a"], {}, False),
        (["hugind", "run", "a", "--", "--strict"], {}, True),  # the agent's argument, not the option
        (["hugind", "check", "a"], {}, False),
        (["hugind"], {}, False),
    ],
)
def test_which_command_lines_may_be_served_warm(argv, environ, expected):
    assert client.wanted(argv, environ) is expected


def test_a_peer_in_the_same_process_context_matches_and_a_traced_one_does_not():
    mine = peer.context("self")
    peer.compare(mine, peer.context(os.getpid()))
    traced = {**mine, "TracerPid": "4242"}
    with pytest.raises(peer.Mismatch, match="traced"):
        peer.compare(mine, traced)
    for name in ("ns:net", "ns:user", "ns:mnt", "cgroup", "NoNewPrivs", "Seccomp_filters", "CapEff", "limits"):
        with pytest.raises(peer.Mismatch, match=name):
            peer.compare(mine, {**mine, name: "other"})


def test_a_proof_is_this_connections_file_and_no_other():
    mine, other = peer.proof_file(), peer.proof_file()
    try:
        reopened = peer.prove(os.getpid(), mine)
        try:
            peer.verify(mine, reopened)
            with pytest.raises(peer.Mismatch):
                peer.verify(other, reopened)
        finally:
            os.close(reopened)
    finally:
        os.close(mine)
        os.close(other)


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def _wait_for_state(pid: int, wanted: str) -> str:
    deadline = time.monotonic() + 10
    state = _state(pid)
    while state != wanted and time.monotonic() < deadline:
        time.sleep(0.05)
        state = _state(pid)
    return state


def test_ctrl_z_stops_the_run_with_its_client_and_fg_continues_both(warm, tmp_path):
    warm.start_server("run", "examples/hello")
    (server,) = warm.servers()
    # a process group of its own in this session: not orphaned, so SIGTSTP stops it as a shell's job
    proc = _sleeping_run(tmp_path, warm.env, process_group=0)
    try:
        child = _child_of(server)
        time.sleep(0.5)  # the client is past its handshake, waiting
        proc.send_signal(signal.SIGTSTP)
        assert _wait_for_state(proc.pid, "T") == "T"
        assert _wait_for_state(child, "T") == "T"
        proc.send_signal(signal.SIGCONT)
        assert _wait_for_state(child, "S") in "SR"
        assert _state(proc.pid) in "SR"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
    finally:
        proc.kill()


def test_a_reader_that_leaves_ends_a_warm_run_as_a_cold_one(warm, tmp_path):
    """`hugind run agent | head -c 1`: the run ends quietly with 141 either way."""
    script = tmp_path / "chatty.js"
    script.write_text("export default () => { for (let i = 0; i < 200000; i++) print('line ' + i); return 1; };")
    warm.start_server("run", "examples/hello")
    results = []
    for extra in ({}, {"HUGIND_WARM": "0"}):
        env = {**warm.env, **extra}
        line = f"{sys.executable} -m hugind run {script} | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"
        out = subprocess.run(["bash", "-c", line], capture_output=True, env=env, cwd=REPO, timeout=60)
        results.append((out.stdout, _untraced(out.stderr)))
        assert (SERVED.encode() in out.stderr) is not extra, out.stderr
    assert results[0] == results[1]
    assert results[0][0] == b"141\n"


def test_a_proof_never_opens_a_fifo_or_a_device(tmp_path):
    """A peer names the descriptor to open: a FIFO with no writer would block the server
    forever, a device could do anything on open. Both are refused at once."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        for fd in (reader, null):
            with pytest.raises(peer.Mismatch, match="not a file"):
                peer.prove(os.getpid(), fd)
    finally:
        os.close(reader)
        os.close(null)


# A client that skips its own checks and answers the server's proof with a file of its own
# (the only one it has if it may not open the server's): it prints the server's answer.
FORGER = """
import os, socket, sys
sys.path[:0] = [sys.argv[2]]
from hugind.warm import wire
from hugind.warm import key as warm_key
sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
sock.connect(warm_key.address(sys.argv[1]))
mine = os.memfd_create("forger")
wire.send(sock, [b"hello", sys.argv[1].encode(), str(mine).encode()])
fields, fds = wire.receive(sock)
assert fields[0] == b"proof", fields
server = int.from_bytes(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)[:4], sys.byteorder)
try:  # the honest proof, which only a client the server's domain allows can make
    os.close(os.open(f"/proc/{server}/fd/{int(fields[1])}", os.O_RDONLY))
    print("could open the server's file")
except OSError as err:
    print("could not open the server's file:", err.strerror)
answer = os.memfd_create("not-the-servers")
cwd = os.open(".", os.O_PATH)
wire.send(sock, [b"run", b"", b"2", b"hugind", b"run", b"X=1"], [answer, cwd, 0, 1, 2])
print(wire.receive(sock)[0])
"""


@pytest.mark.parametrize("confined", [False, True])
def test_a_client_that_forges_its_proof_is_refused_before_any_fork(warm, confined):
    if confined and not _landlock_without_nnp_possible():
        pytest.skip("needs root and Landlock ABI >= 4")
    warm.start_server("run", "examples/hello")
    (server,) = warm.servers()
    key = _client_key(warm)
    proc = subprocess.run(
        [sys.executable, "-c", FORGER, key, str(REPO)],
        capture_output=True,
        env=warm.env,
        cwd=REPO,
        timeout=60,
        preexec_fn=_landlocked if confined else None,
    )
    assert proc.returncode == 0, proc.stderr
    could, answer = proc.stdout.decode().splitlines()
    assert could == (
        "could not open the server's file: Permission denied" if confined else "could open the server's file"
    )
    # The server's proof comparison refuses it, by name (not any later check).
    assert answer == "[b'refuse', b\"the peer's proof is not this connection's file\"]", answer
    assert _children(server) == []


def test_a_request_too_large_for_one_message_runs_cold_and_whole(warm):
    warm.start_server("run", "examples/hello")
    big = {f"WARM_TEST_BIG_{i}": "x" * (100 * 1024) for i in range(3)}  # past the largest message
    proc = warm.run("run", "examples/hello", "--", "world", **big)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert b"Hello, world!" in proc.stdout
    assert b"cold:" in proc.stderr and SERVED.encode() not in proc.stderr


def test_a_server_that_dies_mid_run_takes_the_run_and_the_client_says_so(warm, tmp_path):
    warm.start_server("run", "examples/hello")
    (server,) = warm.servers()
    proc = _sleeping_run(tmp_path, warm.env)
    child = _child_of(server)
    os.kill(server, signal.SIGKILL)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 70, err
    assert b"hugind: error: the warm server ended during the run (HUGIND_WARM=0 runs without" in err
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{child}") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not os.path.exists(f"/proc/{child}")  # PR_SET_PDEATHSIG: it never outlives its server


def test_a_client_with_another_niceness_runs_cold(warm):
    warm.start_server("run", "examples/hello")
    proc = warm.run("run", "examples/hello", preexec_fn=lambda: os.nice(5))
    assert proc.returncode == 0, proc.stderr
    assert b"nice differs" in proc.stderr and SERVED.encode() not in proc.stderr


def test_concurrent_runs_each_get_their_own_streams_and_arguments(warm):
    warm.start_server("run", "examples/hello")
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "hugind", "run", "examples/hello", "--", f"caller-{i}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=warm.env,
            cwd=REPO,
        )
        for i in range(12)
    ]
    for i, proc in enumerate(procs):
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        assert SERVED.encode() in err
        assert json.loads(out)["message"] == f"Hello, caller-{i}!"


def _nohup() -> None:
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def _hangup_then_interrupt(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    proc = _sleeping_run(tmp_path, env, preexec_fn=_nohup)
    time.sleep(1.5)
    proc.send_signal(signal.SIGHUP)  # ignored, as under nohup: the run goes on
    time.sleep(0.5)
    alive = proc.poll() is None
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert alive, err
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def test_a_signal_the_client_ignores_stays_ignored_in_its_run(warm, tmp_path):
    """``nohup hugind run``: SIGHUP is ignored by the cold process; the warm client neither
    forwards it nor lets the child take it."""
    warm.start_server("run", "examples/hello")
    hot = _hangup_then_interrupt(tmp_path, warm.env)
    cold = _hangup_then_interrupt(tmp_path, {**warm.env, "HUGIND_WARM": "0"})
    assert SERVED.encode() in hot.stderr, hot.stderr
    assert (hot.returncode, hot.stdout, _untraced(hot.stderr)) == (cold.returncode, cold.stdout, cold.stderr)
    assert hot.returncode == 130


def test_a_watched_interpreter_is_never_served_warm():
    """Under a debugger, a profiler or coverage, the run must be in the watched process."""
    argv = ["hugind", "run", "a"]
    assert client.wanted(argv, {})
    sys.setprofile(lambda *_: None)
    try:
        assert not client.wanted(argv, {})
    finally:
        sys.setprofile(None)


def test_ps_names_the_server_and_its_runs(warm, tmp_path):
    warm.start_server("run", "examples/hello")
    (server,) = warm.servers()
    proc = _sleeping_run(tmp_path, warm.env)
    try:
        child = _child_of(server)
        assert Path(f"/proc/{server}/comm").read_text() == "hugind-warm\n"
        # The forked child names itself a moment after the fork: wait for it (bounded), since
        # it is found as soon as it exists (seen under load: still "hugind-warm" at first).
        deadline = time.monotonic() + 10
        name = Path(f"/proc/{child}/comm").read_text()
        while name == "hugind-warm\n" and time.monotonic() < deadline:
            time.sleep(0.02)
            name = Path(f"/proc/{child}/comm").read_text()
        assert name == "hugind run\n"
    finally:
        proc.kill()
        proc.communicate(timeout=10)


def test_hugind_warm_lists_servers_and_stop_lets_runs_under_way_finish(warm, tmp_path):
    warm.start_server("run", "examples/hello")
    (server,) = warm.servers()
    listing = warm.run("warm")
    assert listing.returncode == 0, listing.stderr
    assert str(server).encode() in listing.stdout
    proc = _sleeping_run(tmp_path, warm.env)
    try:
        _child_of(server)
        stopping = warm.run("warm", "--stop")
        assert stopping.returncode == 0, stopping.stderr
        assert f"stopping {server} (1 runs under way)".encode() in stopping.stderr
        time.sleep(0.5)
        assert os.path.exists(f"/proc/{server}") and proc.poll() is None  # the run goes on
        later = warm.run("run", "examples/hello")
        assert b"no server" in later.stderr  # it listens no more: the next run starts a new one
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 130, err
        deadline = time.monotonic() + 10
        while _state_or_gone(server) not in ("gone", "Z") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _state_or_gone(server) in ("gone", "Z")  # ended after its last run
    finally:
        proc.kill()


def _state_or_gone(pid: int) -> str:
    try:
        return _state(pid)
    except OSError:
        return "gone"


def test_a_server_is_never_the_child_of_the_run_that_started_it(warm, tmp_path):
    """A long cold run that outlived its server would keep it as a zombie: the server is
    spawned through a middle process that exits at once."""
    proc = _sleeping_run(tmp_path, warm.env)  # no server yet: this run is cold and starts one
    try:
        deadline = time.monotonic() + 30
        while not warm.servers() and time.monotonic() < deadline:
            time.sleep(0.05)
        (server,) = warm.servers()
        with open(f"/proc/{server}/status") as f:
            parent = next(int(line.split()[1]) for line in f if line.startswith("PPid:"))
        assert parent != proc.pid
        assert server not in _children(proc.pid)
    finally:
        proc.kill()
        proc.communicate(timeout=10)


def test_a_server_that_never_answers_the_request_does_not_hang_its_client(warm, monkeypatch):
    """Stopped (SIGSTOP) between the handshake and the fork, a server leaves its client
    waiting at most STARTED_TIMEOUT; the client then ends with 70 and says why (not a cold
    run: the child may exist)."""
    key = _client_key(warm)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(warm_key.address(key))
    listener.listen(1)
    import threading

    def silent_after_the_request() -> None:  # an honest server that then stops answering
        conn, _ = listener.accept()
        with conn:
            fields, _ = wire.receive(conn)
            creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
            client_pid = int.from_bytes(creds[:4], sys.byteorder)
            mine = peer.proof_file()
            answer = peer.prove(client_pid, int(fields[2]))
            wire.send(conn, [b"proof", str(mine).encode()], [answer])
            _, fds = wire.receive(conn)  # the run request: never answered
            for fd in fds:  # the client's streams among them: held, its reader would wait on
                os.close(fd)
            time.sleep(8)

    thread = threading.Thread(target=silent_after_the_request, daemon=True)
    thread.start()
    code = (
        "import sys; sys.argv = ['hugind', 'run', 'examples/hello']; del sys.path[0]  # as python -m hugind\n"
        "from hugind.warm import client; client.STARTED_TIMEOUT = 2.0\n"
        "print(client.attempt(sys.argv))"
    )
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, env=warm.env, cwd=REPO, timeout=15)
    finally:
        listener.close()
    assert time.monotonic() - started < 6
    assert proc.stdout == b"70\n", proc.stderr
    assert b"the warm server did not start the run within 2 s" in proc.stderr


def test_a_server_holds_no_descriptor_of_whoever_started_it(warm, tmp_path):
    """A supervisor's pipe inherited by the first run must not stay open in the server,
    or the supervisor would wait on it for the server's whole life."""
    read_end, write_end = os.pipe()
    os.set_inheritable(write_end, True)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "hugind", "run", "examples/hello"],
            capture_output=True,
            env=warm.env,
            cwd=REPO,
            pass_fds=(write_end,),
            timeout=60,
        )
        assert b"no server" in proc.stderr
    finally:
        os.close(write_end)
    deadline = time.monotonic() + 30
    while not warm.servers() and time.monotonic() < deadline:
        time.sleep(0.05)
    (server,) = warm.servers()
    time.sleep(0.5)  # past its start
    held = [os.readlink(f"/proc/{server}/fd/{fd}") for fd in os.listdir(f"/proc/{server}/fd")]
    pipe = f"pipe:[{os.fstat(read_end).st_ino}]"
    os.close(read_end)
    assert pipe not in held, held
