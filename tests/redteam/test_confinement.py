"""Attacks by whitelisted programs on what the shell policy alone cannot hold.

Every attack runs twice: with bubblewrap (the layer CI installs) and with
the launcher hugind uses where bubblewrap is absent (user/PID/net
namespaces + Landlock). Each is judged from outside: a secret that must not
appear, a file that must not exist, a process that must be gone, a loopback
listener that must see no connection. The comment on each test names the
layer that holds it in each mode.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hugind.confine.probe import capabilities
from hugind.paths import engine_dir
from hugind.policy.boundary import BoundaryConflict
from tests.redteam.helpers import js, probe_source, run_attack, write_manifest
from tests.support.processes import marker, wait_gone, wait_present

SECRET = "hugind-redteam-host-secret-7f3a"


@pytest.fixture(params=["bwrap", "launcher"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "launcher":
        monkeypatch.setenv("HUGIND_BWRAP", "none")
        caps = capabilities()
        if not (caps.namespaces and caps.landlock_abi):
            pytest.skip(f"no user namespaces or Landlock here: {caps.namespaces_problem}")
    else:
        monkeypatch.delenv("HUGIND_BWRAP", raising=False)
        caps = capabilities()
        if caps.bwrap is None:
            pytest.skip(f"bubblewrap unavailable: {caps.bwrap_problem} (.ci/run installs it)")
    monkeypatch.setenv("HUGIND_REDTEAM_SECRET", SECRET)  # in hugind's own environment
    return request.param


def shell(whitelist: list[str] | None, **keys: object) -> dict:
    section: dict = {"allow": True, "timeout": 10}
    if whitelist is not None:
        section["whitelist"] = whitelist
    return {"shell": section, **keys}


def runs(*commands: str) -> str:
    """A body running each command (detailed results, in order)."""
    lines = ["const out = [];"]
    for command in commands:
        lines.append(f"out.push(await run_command({js(command)}, {{detailed: true}}));")
    lines.append("return out;")
    return "\n".join(lines)


def outputs(out) -> str:
    assert out.value["ok"], out.value
    return "".join(r["stdout"] + r["stderr"] for r in out.value["value"])


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside every root of the attack agents, with a secret in it."""
    path = tmp_path / "outside"
    path.mkdir()
    (path / "secret.txt").write_text(SECRET)
    return path


# --- /proc: hugind's environment (bwrap: own PID namespace and /proc; launcher: Landlock denies /proc)


ENVIRON_HUNT = """
const listing = await spawn('ls', ['/proc'], {detailed: true});
const pids = listing.stdout.split(/\\s+/).filter((x) => /^[0-9]+$/.test(x));
const found = [];
for (const p of [...pids, 'self/..', 'self/../1', 'thread-self/../..']) {
  const r = await spawn('cat', [`/proc/${p}/environ`], {detailed: true});
  if (r.stdout.includes('HUGIND_REDTEAM_SECRET')) found.push(p);
}
return {pids: pids.length, found};
"""


def test_cat_cannot_read_hugind_environ_through_proc(cli, agent_dir, mode):
    # hugind runs as a CLI process whose initial environment holds the secret (as an API key would).
    root = agent_dir()
    root.mkdir(parents=True, exist_ok=True)
    (root / "main.js").write_text(probe_source(ENVIRON_HUNT))
    write_manifest(root, shell(["cat", "ls"]))
    res = cli("run", str(root), env={"HUGIND_REDTEAM_SECRET": SECRET})
    assert res.code == 0, res.stderr
    assert SECRET not in res.stdout
    value = json.loads(res.stdout)["value"]
    assert value["found"] == []


def test_no_hugind_process_is_visible(attack, mode):
    # bwrap: the PID namespace shows only the sandbox; launcher: /proc is not readable at all.
    out = attack(runs("ls /proc"), shell(["ls"]))
    listing = out.value["value"][0]["stdout"].split()
    assert str(os.getpid()) not in listing
    assert len([p for p in listing if p.isdigit()]) <= 5


# --- filesystem (bwrap: the mount view; launcher: Landlock) --------------------------------------


def test_whitelisted_program_cannot_read_outside_the_readable_roots(attack, mode, outside):
    out = attack(
        runs(f"cat {outside}/secret.txt", f"ls {outside}", f"head -c 100 {outside}/secret.txt"),
        shell(["cat", "ls", "head"], filesystem={"read": ["."]}),
    )
    assert SECRET not in outputs(out)
    assert all(r["exit_code"] != 0 for r in out.value["value"])


def test_whitelisted_program_cannot_write_outside_the_writable_roots_through_its_options(attack, mode, outside):
    commands = (
        f"sort -o {outside}/sorted data/words",
        f"cp data/words {outside}/copied",
        f"tee {outside}/teed",
        f"dd if=data/words of={outside}/dd",
        f"touch {outside}/secret.txt",
        f"truncate -s 0 {outside}/secret.txt",
    )

    def body_root(root: Path) -> None:
        (root / "data").mkdir()
        (root / "data" / "words").write_text("b\na\n")
        (root / "out").mkdir()

    root = outside.parent / "agent-write"
    root.mkdir()
    body_root(root)
    perms = shell(["sort", "cp", "tee", "dd", "touch", "truncate"], filesystem={"read": ["data"], "write": ["out"]})
    out = run_attack(root, runs(*commands, "sort -o out/sorted data/words"), perms)
    results = out.value["value"]
    assert all(r["exit_code"] != 0 for r in results[:-1]), results
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET
    assert results[-1]["exit_code"] == 0 and (root / "out" / "sorted").read_text() == "a\nb\n"  # inside: works


def test_read_only_mode_makes_the_roots_read_only_for_children(agent_dir, mode):
    root = agent_dir()
    (root / "data").mkdir(parents=True)
    (root / "data" / "keep").write_text("x")
    perms = shell(["touch", "rm"], filesystem={"write": ["data"]})
    out = run_attack(root, runs("touch data/new", "rm data/keep"), perms, manifest={"runtime_fs_mode": "read-only"})
    assert all(r["exit_code"] != 0 for r in out.value["value"])
    assert (root / "data" / "keep").exists() and not (root / "data" / "new").exists()


def test_a_child_cannot_read_hugind_engine_even_inside_a_readable_root(attack, mode):
    # A root containing hugind's engine dir is refused before the run (#26: a carve-out
    # left its parent open to rename); the engine is never in any child's view.
    package = engine_dir().parent
    with pytest.raises(BoundaryConflict, match="hugind's own"):
        attack(runs(f"ls {engine_dir()}"), shell(["ls"], filesystem={"read": [str(package)]}))
    out = attack(runs(f"ls {engine_dir()}"), shell(["ls"], filesystem={"read": ["."]}))
    assert out.value["value"][0]["exit_code"] != 0 and "hugind-js.wasm" not in out.value["value"][0]["stdout"]


def test_a_child_cannot_read_hugind_cache(attack, mode):
    from hugind.paths import cache_root

    cache = cache_root()
    out = attack(runs(f"ls -R {cache}"), shell(["ls"], filesystem={"read": ["."]}))
    result = out.value["value"][0]
    assert result["exit_code"] != 0 and ".cwasm" not in result["stdout"]


def test_a_child_cannot_read_the_users_backend_config_or_sessions(agent_dir, attack, mode, monkeypatch):
    # $HUGIND_HOME inside the readable root is refused before the run (#26); beside it,
    # its config.yaml (API keys) and saved sessions are outside every child's view.
    root = agent_dir()
    home = root / "home"
    (home / "sessions" / "s1").mkdir(parents=True)
    (home / "config.yaml").write_text("api_key: sk-hugind-redteam\n")
    monkeypatch.setenv("HUGIND_HOME", str(home))
    with pytest.raises(BoundaryConflict, match="HUGIND_HOME"):
        attack(runs("cat home/config.yaml"), shell(["cat"], filesystem={"read": ["."]}), root=root)
    beside = root.parent / "home-beside"
    (beside / "sessions" / "s1").mkdir(parents=True)
    (beside / "sessions" / "s1" / "state.json").write_text("other run's conversation")
    (beside / "config.yaml").write_text("api_key: sk-hugind-redteam\n")
    monkeypatch.setenv("HUGIND_HOME", str(beside))
    out = attack(
        runs(f"cat {beside / 'config.yaml'}", f"cat {beside / 'sessions/s1/state.json'}"),
        shell(["cat"], filesystem={"read": ["."]}),
    )
    config, session = out.value["value"]
    assert config["exit_code"] != 0 and "sk-hugind-redteam" not in config["stdout"]
    assert session["exit_code"] != 0 and "conversation" not in session["stdout"]


def test_etc_secrets_are_hidden(attack, mode):
    if not os.path.exists("/etc/shadow"):
        pytest.skip("no /etc/shadow on this machine")
    out = attack(runs("cat /etc/shadow", "cat /etc/passwd"), shell(["cat"]))
    shadow, passwd = out.value["value"]
    assert shadow["exit_code"] != 0 and "root:" not in shadow["stdout"]
    assert passwd["exit_code"] == 0 and "root:" in passwd["stdout"]  # what programs need still works


# --- processes (bwrap and launcher: the PID namespace dies with the command) --------------------


@pytest.mark.parametrize(
    "escape",
    [
        "setsid sleep {m} > /dev/null 2>&1 &",
        "nohup sleep {m} > /dev/null 2>&1 &",
        "sh -c '(sleep {m} &) &'",
        "setsid sh -c 'sleep {m} & echo forked' &",
    ],
    ids=["setsid", "nohup", "double-fork", "setsid-double-fork"],
)
def test_escaped_children_die_with_the_command(attack, mode, escape):
    mark = marker()
    command = escape.format(m=mark) + " sleep 0.3; echo done"
    out = attack(runs(command), shell(["sh", "setsid", "nohup", "sleep", "echo"]))
    assert out.value["value"][0]["stdout"].endswith("done\n")
    assert wait_gone(mark) == []


def _process_count() -> int:
    return sum(1 for p in os.listdir("/proc") if p.isdigit())


def test_a_fork_bomb_is_bounded_and_dies(attack, mode):
    # Both modes: a pids cgroup per child (RLIMIT_NPROC does not bind root), then the PID namespace dies.
    if capabilities().process_cap is None:
        pytest.skip("nothing bounds a root fork bomb here (no pids cgroup): not run, it would hurt the machine")
    mark = marker()
    # Forks until the kernel says no, then keeps trying (gently: the test machine has 2 cores).
    bomb = (
        "import os, time\n"
        "while True:\n"
        "    try:\n"
        "        os.fork()\n"
        "    except OSError:\n"
        f"        time.sleep(0.05)\n# {mark}"
    )
    base = _process_count()
    peak = [base]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], _process_count())
            time.sleep(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        body = f"return await spawn('python3', ['-c', {js(bomb)}], {{detailed: true}});"
        out = attack(body, {"shell": {"allow": True, "whitelist": ["python3"], "timeout": 2}})
    finally:
        stop.set()
        sampler.join()
    assert out.value["ok"] and out.value["value"]["timed_out"] is True
    # 256 in the child's cgroup, plus what other tests on the machine start meanwhile.
    assert peak[0] - base <= 256 + 64, (base, peak[0])
    assert wait_gone(mark, within=5) == []


# --- network (bwrap and launcher: an empty network namespace; launcher also: Landlock TCP) ------


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback TCP listener on the host that records every connection it gets."""
    seen: list[bytes] = []
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    sock.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(1)
                try:
                    seen.append(conn.recv(100) or b"<connected>")
                except OSError:
                    seen.append(b"<connected>")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield sock.getsockname()[1], seen
    stop.set()
    thread.join()
    sock.close()


CONNECT = (
    "import errno,socket,sys\n"
    "try:\n"
    "    s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=2)\n"
    "    s.sendall(b'leak'); print('CONNECTED')\n"
    "except OSError as e:\n"
    "    print('refused', errno.errorcode.get(e.errno, e))\n"
)
# The connect is made and refused (not a probe that died before it, not a timeout), by the
# first layer in its way: under the launcher Landlock's TCP rule (EACCES); under bubblewrap
# the child's own network namespace, whose loopback has nothing listening (ECONNREFUSED).
NO_ROUTE = {"launcher": "refused EACCES", "bwrap": "refused ECONNREFUSED"}


def test_no_child_network_when_the_policy_denies_network(attack, mode, listener):
    port, seen = listener
    body = f"return await spawn('python3', ['-c', {js(CONNECT)}, '{port}'], {{detailed: true}});"
    out = attack(body, {"shell": {"allow": True, "whitelist": ["python3"], "timeout": 10}})
    assert out.value["value"]["stdout"].strip() == NO_ROUTE[mode], out.value
    time.sleep(0.3)
    assert seen == []


def test_no_direct_child_network_when_the_policy_allows_some_hosts(attack, mode, listener):
    # Network allowed, but only to another port: the child has no route of its own to the host.
    port, seen = listener
    body = f"return await spawn('python3', ['-c', {js(CONNECT)}, '{port}'], {{detailed: true}});"
    perms = {
        "shell": {"allow": True, "whitelist": ["python3"], "timeout": 10},
        "network": {"allow": True, "allowed_ips": [f"127.0.0.1:{port + 1}"]},
    }
    out = attack(body, perms)
    assert out.value["value"]["stdout"].strip() == NO_ROUTE[mode], out.value
    time.sleep(0.3)
    assert seen == []


# --- hugind killed with SIGKILL: nothing it started survives (bwrap --die-with-parent; launcher PDEATHSIG)


def test_children_die_when_hugind_is_killed(agent_dir, mode):
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO

    mark = marker()
    root = agent_dir()
    root.mkdir(parents=True, exist_ok=True)
    body = f"await run_command({js(f'setsid sleep {mark} & sleep {mark}')}); return 'unreachable';"
    (root / "main.js").write_text(probe_source(body))
    write_manifest(root, shell(["sh", "setsid", "sleep"]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "hugind", "run", str(root)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # so killing hugind does not reach its children through the group
    )
    try:
        assert len(wait_present(mark, within=30, program="sleep", count=2)) == 2, "the commands never started"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        assert wait_gone(mark, within=5) == []
    finally:
        if proc.poll() is None:
            proc.kill()


# --- network allowed: the proxy is the only route, and it applies the fetch rules -------------

FETCH_EACH = (
    "import sys, urllib.request\n"
    "for url in sys.argv[1:]:\n"
    "    try:\n"
    "        with urllib.request.urlopen(url, timeout=5) as r:\n"
    "            print(url, r.status, r.read(40).decode(errors='replace'))\n"
    "    except Exception as e:\n"
    "        print(url, 'ERR', getattr(e, 'code', ''), e)\n"
)


def test_child_traffic_goes_through_the_proxy_under_the_network_policy(attack, mode, server):
    allowed = server.url("/hello")
    other_port = f"http://127.0.0.1:{server.port + 1}/hello"
    unlisted_name = "http://unlisted.example/"  # refused by the host list, before any DNS lookup
    body = (
        f"return await spawn('python3', ['-c', {js(FETCH_EACH)}, {js(allowed)}, {js(other_port)}, "
        f"{js(unlisted_name)}], {{detailed: true}});"
    )
    perms = {
        "shell": {"allow": True, "whitelist": ["python3"], "timeout": 20},
        "network": {"allow": True, "allowed_ips": [f"127.0.0.1:{server.port}"]},
    }
    out = attack(body, perms)
    lines = out.value["value"]["stdout"].splitlines()
    assert lines[0].startswith(f"{allowed} 200 hello from loopback"), lines
    assert lines[1].startswith(f"{other_port} ERR 403"), lines
    assert lines[2].startswith(f"{unlisted_name} ERR 403"), lines
    denied = [(e["request"]["url"], e["rule"]) for e in out.denied]
    assert (other_port, "network.allowed_ips") in denied
    assert (unlisted_name, "network.allowed_domains") in denied
    assert server.paths() == ["/hello"]  # only the allowed request reached it


# --- the run's zygote: one sandbox per view, a worker per command at a time (hugind/confine/zygote.py)


def _python_result(attack, code: str, *args: str, timeout: int = 10, **keys: object) -> dict:
    body = f"return await spawn('python3', ['-c', {js(code)}, ...{js(list(args))}], {{detailed: true}});"
    out = attack(body, {"shell": {"allow": True, "whitelist": ["python3"], "timeout": timeout}, **keys})
    assert out.value["ok"], out.value
    return out.value["value"]


def test_commands_of_one_view_share_the_runs_private_tmp(attack, mode, tmp_path):
    # The zygote's view: /tmp is private to the run's sandbox, not to each command; a program
    # outside the view takes the per-command launch (its own /tmp), and HUGIND_ZYGOTE=0 restores it.
    outside = tmp_path / "bin"
    outside.mkdir()
    (outside / "prog").write_text("#!/bin/sh\nls /tmp/zygote-mark\n")
    (outside / "prog").chmod(0o755)
    body = (
        "await run_command('touch /tmp/zygote-mark');\n"
        "const a = await run_command('ls /tmp/zygote-mark', {detailed: true});\n"
        f"const b = await spawn({js(str(outside / 'prog'))}, [], {{detailed: true}});\n"
        "return [a.exit_code, b.exit_code];"
    )
    perms = shell(["touch", "ls", str(outside / "prog")])
    assert attack(body, perms).value["value"] == [0, 2]
    os.environ["HUGIND_ZYGOTE"] = "0"
    try:
        assert attack(body, perms).value["value"] == [2, 2]
    finally:
        del os.environ["HUGIND_ZYGOTE"]


KILL_PARENT = """
import os, signal, subprocess, sys, time
subprocess.Popen(['sleep', sys.argv[1]])
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(float(sys.argv[1]))
"""


def test_a_command_that_kills_its_worker_ends_with_everything_it_started(attack, mode):
    mark = marker()
    body = (
        f"const r = await spawn('python3', ['-c', {js(KILL_PARENT)}, {js(mark)}], {{detailed: true}});\n"
        "const after = await run_command('echo still-serving', {detailed: true});\n"
        "return [r.exit_code, r.timed_out, after.stdout];"
    )
    out = attack(body, shell(["python3", "echo"]))
    code, timed_out, after = out.value["value"]
    assert (code, timed_out, after) == (137, False, "still-serving\n")
    assert wait_gone(mark) == []


SIGNAL_EVERYONE = """
import errno, json, os
me, worker = os.getpid(), os.getppid()
try:
    pids, listed = {int(p) for p in os.listdir('/proc') if p.isdigit()}, 'listed'
except OSError as err:  # the launcher's Landlock hides /proc: the pids just before this one
    pids, listed = set(), errno.errorcode[err.errno]
# The zygote and the run's other workers started moments before this command.
pids |= {1, *range(max(2, me - 20000), me)}
refused, hit = {}, []
for p in sorted(pids - {me, worker}):
    try:  # signal 0: the very permission check a SIGKILL gets, and nothing is killed if it passes
        os.kill(p, 0)
        hit.append(p)
    except OSError as err:
        if err.errno != errno.ESRCH:  # there is a process, and the signal was refused
            refused[errno.errorcode[err.errno]] = refused.get(errno.errorcode[err.errno], 0) + 1
print(json.dumps({'listed': listed, 'refused': refused, 'hit': hit}))
"""


def test_a_command_can_signal_neither_the_zygote_nor_other_workers(attack, mode):
    # Landlock scopes signals to the command's own domain (its worker's): the zygote, other
    # workers and the sandbox's init are outside it, so a later command still finds the run's
    # /tmp as it was (the same sandbox). The probe signals every process it can name (signal 0,
    # so a broken layer kills nothing) and reports each refusal: it must have reached kill()
    # for some process and been refused with EPERM, the scope's errno, every time.
    body = (
        "await run_command('touch /tmp/zygote-alive');\n"
        f"const r = await spawn('python3', ['-c', {js(SIGNAL_EVERYONE)}], {{detailed: true}});\n"
        "const after = await run_command('ls /tmp/zygote-alive', {detailed: true});\n"
        "return [r.stdout, r.stderr, after.exit_code];"
    )
    out = attack(body, shell(["python3", "touch", "ls"]))
    stdout, stderr, after = out.value["value"]
    assert after == 0, (stdout, stderr)
    report = json.loads(stdout)
    assert report["hit"] == [], report
    assert set(report["refused"]) == {"EPERM"} and report["refused"]["EPERM"] >= 1, report
    if mode == "launcher":  # the launcher's Landlock hides /proc altogether
        assert report["listed"] == "EACCES", report


READ_OTHERS = """
import errno, json, os
me, worker = os.getpid(), os.getppid()
try:
    pids = {int(p) for p in os.listdir('/proc') if p.isdigit()}
except OSError:  # the launcher's Landlock hides /proc: try the ones that exist anyway
    pids = set()
alive = set()
for p in (pids | {worker, 1, *range(max(2, me - 20000), me)}) - {me}:
    try:
        os.kill(p, 0)
        alive.add(p)
    except PermissionError:  # there is a process (outside this domain)
        alive.add(p)
    except OSError:
        pass
got, refused = [], {}
def note(path, err):
    refused[path] = errno.errorcode[err.errno]
for p in sorted(alive):
    paths = [f'/proc/{p}/environ', f'/proc/{p}/mem']
    try:  # the numbers may be listed (plain permissions); what they lead to must stay closed
        paths += [f'/proc/{p}/fd/{n}' for n in os.listdir(f'/proc/{p}/fd')]
    except OSError as err:
        note(f'/proc/{p}/fd', err)
    for path in paths:
        try:
            with open(path, 'rb') as f:
                if path.endswith('/mem'):
                    f.seek(0x400000)
                f.read(64)
            got.append(path)
        except OSError as err:
            note(path, err)
        if '/fd/' in path:
            try:
                os.readlink(path)
                got.append(path + ' (link)')
            except OSError as err:
                note(path + ' (link)', err)
print(json.dumps({'worker': worker, 'alive': sorted(alive), 'got': got, 'refused': refused}))
"""


def test_a_command_cannot_read_the_zygote_or_its_worker(attack, mode):
    # Not dumpable (zygote, workers) and Landlock's ptrace rule (other domains): environ, mem
    # and the descriptor table of every other process are closed to it. The probe finds the
    # processes by signal 0 (it works where /proc cannot be listed), opens each file, and
    # reports every errno: nothing read, and the worker's own files were tried and refused:
    # EACCES under bubblewrap (its /proc refuses a process it may not trace); under the
    # launcher ENOENT, for processes signal 0 just found alive: its own mount view has no
    # /proc at all (confine/mounts.py), so there is nothing to open.
    value = _python_result(attack, READ_OTHERS)
    assert value["exit_code"] == 0, value["stderr"]
    report = json.loads(value["stdout"])
    assert report["got"] == [], report
    worker = report["worker"]
    assert worker in report["alive"] and len(report["alive"]) >= 2, report  # the worker and the zygote at least
    expected = "EACCES" if mode == "bwrap" else "ENOENT"
    for p in report["alive"]:
        for name in ("environ", "mem"):
            assert report["refused"][f"/proc/{p}/{name}"] == expected, report


LIST_FDS = """
import os, socket
found = []
for fd in range(3, 4096):
    try:
        os.fstat(fd)
    except OSError:
        continue
    found.append(fd)
    try:  # a socket of the zygote's would take this as a command
        socket.socket(fileno=os.dup(fd)).send(b'{"op": "run", "id": 1}')
    except OSError:
        pass
print(found)
"""


def test_no_zygote_descriptor_reaches_a_command(attack, mode):
    value = _python_result(attack, LIST_FDS)
    assert value["exit_code"] == 0, value["stderr"]
    assert value["stdout"].strip() == "[]"


def test_an_output_flood_is_capped_and_the_command_killed(attack, mode):
    mark = marker()
    flood = f"import sys, time\n# {mark}\nwhile True:\n    sys.stdout.write('x' * 65536)\n"
    body = (
        f"const r = await spawn('python3', ['-c', {js(flood)}], {{detailed: true}});\n"
        "return [r.truncated, r.stdout.length, r.timed_out];"
    )
    out = attack(body, {"shell": {"allow": True, "whitelist": ["python3"], "timeout": 20, "max_output": 100000}})
    truncated, length, timed_out = out.value["value"]
    assert truncated is True and length <= 100000 and timed_out is False
    assert wait_gone(mark) == []


IGNORE_TERM = (
    "import signal, sys, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\ntime.sleep(float(sys.argv[1]))\n"
)


def test_a_command_ignoring_sigterm_is_killed_after_its_timeout(attack, mode):
    mark = marker()
    body = (
        f"const r = await spawn('python3', ['-c', {js(IGNORE_TERM)}, {js(mark)}], {{detailed: true}});\n"
        "const after = await run_command('echo next', {detailed: true});\n"
        "return [r.timed_out, after.stdout];"
    )
    started = time.monotonic()
    out = attack(body, {"shell": {"allow": True, "whitelist": ["python3", "echo"], "timeout": 1}})
    assert out.value["value"] == [True, "next\n"]
    assert time.monotonic() - started < 20
    assert wait_gone(mark) == []


def _descendants(pid: int) -> set[int]:
    """Host pids below ``pid`` now (from every process's parent in /proc)."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    parents[int(entry)] = int(f.read().rsplit(b")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
    found, todo = set(), [pid]
    while todo:
        here = todo.pop()
        for child, parent in parents.items():
            if parent == here and child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def test_the_zygote_dies_with_the_run(agent_dir, mode):
    import subprocess
    import sys

    from tests.conftest import REPO

    mark = marker()
    root = agent_dir()
    body = f"await run_command('true'); await run_command({js(f'sleep {mark}')}); return 'done';"
    (root / "main.js").write_text(probe_source(body))
    write_manifest(root, {"shell": {"allow": True, "whitelist": ["true", "sleep"], "timeout": 2}})
    # cold: the run's process tree must be this process's (a warm run's is its server's)
    env = {**os.environ, "HUGIND_WARM": "0"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "hugind", "run", str(root)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        assert wait_present(mark, within=30, program="sleep"), "the command never started"
        below = _descendants(proc.pid)
        assert any(b"zygote.py" in Path(f"/proc/{p}/cmdline").read_bytes() for p in below if _alive(p)), below
        _, err = proc.communicate(timeout=30)
        assert proc.returncode == 0, err
        end = time.monotonic() + 5
        while any(_alive(p) for p in below) and time.monotonic() < end:
            time.sleep(0.05)
        assert [p for p in below if _alive(p)] == []
    finally:
        if proc.poll() is None:
            proc.kill()


# --- warm start (hugind/warm): a command cannot reach a warm server's abstract socket

REACH_ABSTRACT = """
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect(b"\\0" + sys.argv[1].encode())
    print("connected")
except OSError as err:
    print("refused", err.errno)
"""


def test_a_command_cannot_reach_a_warm_servers_socket(attack, mode):
    """A warm server listens on an abstract socket in hugind's network namespace. A command
    in bubblewrap has a namespace of its own; one under the launcher is scoped by Landlock.
    (Were it reached, the server would still refuse it: tests/warm.)"""
    import socket as sockets

    name = f"hugind-warm-redteam-{os.getpid()}"
    listener = sockets.socket(sockets.AF_UNIX, sockets.SOCK_SEQPACKET)
    listener.bind(b"\0" + name.encode())
    listener.listen(4)
    try:
        probe = sockets.socket(sockets.AF_UNIX, sockets.SOCK_SEQPACKET)
        probe.connect(b"\0" + name.encode())  # reachable from here: the attack is meaningful
        probe.close()
        result = _python_result(attack, REACH_ABSTRACT, name)
    finally:
        listener.close()
    # The connect was made and refused by the command's own network namespace (both modes
    # have one): the name does not exist there, ECONNREFUSED. Landlock's abstract-socket scope
    # (EPERM) is behind it and not reached here; any other errno is an unexplained refusal.
    assert result["stdout"].split() == ["refused", str(errno.ECONNREFUSED)], result
