"""The run's zygote from hugind's side: real zygotes in real sandboxes, driven through
their client (hugind/confine/zygotes.py), in both confinement modes."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from hugind.confine.plan import ChildPlan, child_view, plan_child
from hugind.confine.probe import capabilities
from hugind.confine.zygotes import ZYGOTE_ENV, Zygote, ZygotePool
from hugind.host.shell import _zygote_for
from hugind.manifest import load_agent
from hugind.run import RunOptions, make_policy

READ_ENVIRONS = """
import errno, json, os, sys, time
token = os.environ['TOKEN']
me = os.getpid()
seen, refused, read = set(), {}, 0
end = time.monotonic() + 1.5
while time.monotonic() < end:
    try:
        pids = os.listdir('/proc')
    except OSError:  # the launcher's Landlock hides /proc: the pids just before this one
        pids = [str(p) for p in range(max(1, me - 2000), me + 8)]
    for p in pids:
        if not p.isdigit() or int(p) == me:
            continue
        try:
            with open(f'/proc/{p}/environ', 'rb') as f:
                read += 1
                for item in f.read().split(b'\\0'):
                    if item.startswith(b'TOKEN=') and item != f'TOKEN={token}'.encode():
                        seen.add(item.decode())
        except OSError as err:
            name = errno.errorcode.get(err.errno, str(err.errno))
            refused[name] = refused.get(name, 0) + 1
    time.sleep(0.02)
print(json.dumps({'token': token, 'cwd': os.getcwd(), 'seen': sorted(seen), 'refused': refused, 'read': read}))
"""


def _engine(root: Path, permissions: dict):
    root.mkdir(parents=True, exist_ok=True)
    manifest = {"name": "zygote-test", "entry_point": "main.js", "permissions": permissions}
    (root / "agent.yaml").write_text(yaml.safe_dump(manifest))
    (root / "main.js").write_text("export default () => 1;\n")
    return make_policy(load_agent(root), RunOptions())


@pytest.fixture
def agent(tmp_path: Path, mode: str):
    engine = _engine(tmp_path / "agent", {"filesystem": {"read": ["."]}, "shell": {"allow": True}})
    yield engine
    engine.close()


@pytest.fixture
def zygote(agent, tmp_path: Path) -> Iterator[Zygote]:
    root = str(tmp_path / "agent")
    z = Zygote(child_view(agent, None, root), capabilities())
    yield z
    z.close()


def _run(zygote: Zygote, plan: ChildPlan, timeout: float = 20) -> tuple[int | None, str, str]:
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        ticket = zygote.start(plan, out_w, err_w)
    finally:
        os.close(out_w)
        os.close(err_w)
    with os.fdopen(out_r, "rb") as out, os.fdopen(err_r, "rb") as err:
        stdout, stderr = out.read(), err.read()
    assert ticket.wait(timeout)
    return ticket.code, stdout.decode(), stderr.decode()


def test_concurrent_commands_see_neither_the_others_environment_nor_cwd(agent, zygote, tmp_path, mode):
    root = tmp_path / "agent"
    plans = []
    for name in ("alpha", "beta", "gamma"):
        (root / name).mkdir()
        env = {"PATH": "/usr/bin:/bin", "TOKEN": f"{name}-secret"}
        plans.append(plan_child(agent, ("/usr/bin/env", "python3", "-c", READ_ENVIRONS), str(root / name), env))
    results: dict[str, tuple[int | None, str, str]] = {}

    def one(plan: ChildPlan) -> None:
        results[plan.env["TOKEN"]] = _run(zygote, plan)

    threads = [threading.Thread(target=one, args=(plan,)) for plan in plans]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name in ("alpha", "beta", "gamma"):
        code, stdout, stderr = results[f"{name}-secret"]
        assert code == 0, stderr
        report = json.loads(stdout)
        assert (report["token"], report["cwd"], report["seen"]) == (f"{name}-secret", str(root / name), [])
        # The probe reached the open of other processes' environ, and each was refused: under
        # bubblewrap by Landlock's ptrace rule on its /proc (EACCES); the launcher's own mount
        # view has no /proc at all (confine/mounts.py), so every open finds nothing (ENOENT).
        assert report["read"] == 0, report
        if mode == "bwrap":
            assert report["refused"].get("EACCES", 0) >= 1, report
            assert set(report["refused"]) <= {"EACCES", "ENOENT", "ESRCH"}, report
        else:
            assert set(report["refused"]) == {"ENOENT"} and report["refused"]["ENOENT"] >= 1, report


def test_the_environment_is_exactly_the_planned_one(agent, zygote, tmp_path):
    plan = plan_child(agent, ("/usr/bin/env",), str(tmp_path / "agent"), {"ONLY": "this"})
    assert _run(zygote, plan) == (0, "ONLY=this\n", "")


def test_exit_status_and_a_missing_program(agent, zygote, tmp_path):
    root = str(tmp_path / "agent")
    assert _run(zygote, plan_child(agent, ("/bin/sh", "-c", "exit 7"), root, {}))[0] == 7
    assert _run(zygote, plan_child(agent, ("/bin/sh", "-c", "kill -9 $$"), root, {}))[0] == 128 + 9
    code, _, stderr = _run(zygote, plan_child(agent, ("/usr/bin/no-such-program",), root, {}))
    assert code == 126 and stderr.startswith("hugind-confine: cannot execute /usr/bin/no-such-program")


def test_rlimits_are_the_commands(agent, zygote, tmp_path):
    plan = plan_child(agent, ("/bin/sh", "-c", "ulimit -n; ulimit -Hn; ulimit -f"), str(tmp_path / "agent"), {})
    code, stdout, _ = _run(zygote, plan)
    files = plan.rlimits.file_size // 512  # ulimit -f counts 512-byte blocks
    assert (code, stdout.split()) == (0, [str(plan.rlimits.open_files)] * 2 + [str(files)])


def test_a_killed_zygote_fails_its_commands_and_the_next_lease_starts_another(agent, tmp_path):
    pool = ZygotePool()
    try:
        view = child_view(agent, None, str(tmp_path / "agent"))
        first = pool.get(view, capabilities())
        assert first is not None
        plan = plan_child(agent, ("/bin/sleep", "30"), str(tmp_path / "agent"), {})
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        ticket = first.start(plan, out_w, err_w)
        os.close(out_w)
        os.close(err_w)
        started = time.monotonic()
        first.kill()  # what hugind does to a zygote that stopped answering
        assert ticket.wait(10) and ticket.code is None
        assert os.read(out_r, 10) == b""  # the command died with the sandbox
        assert time.monotonic() - started < 10
        os.close(out_r)
        os.close(err_r)
        second = pool.get(view, capabilities())
        assert second is not None and second is not first
        assert _run(second, plan_child(agent, ("/bin/true",), str(tmp_path / "agent"), {}))[0] == 0
    finally:
        pool.close()


def test_commands_outside_the_view_or_with_network_take_the_per_command_path(mode, tmp_path, monkeypatch):
    class Network:
        zygotes = ZygotePool()

    root = tmp_path / "agent"
    engine = _engine(root, {"filesystem": {"read": ["."]}, "shell": {"allow": True}})
    netted = _engine(tmp_path / "net", {"shell": {"allow": True}, "network": {"allow": True}})
    outside = tmp_path / "elsewhere" / "prog"
    outside.parent.mkdir()
    outside.write_text("#!/bin/sh\n")
    caps = capabilities()
    try:
        inside = plan_child(engine, ("/bin/true",), str(root), {})
        mine = _zygote_for(engine, Network(), inside, caps)
        assert mine is not None and mine is _zygote_for(engine, Network(), inside, caps)
        assert _zygote_for(engine, Network(), plan_child(engine, (str(outside),), str(root), {}), caps) is None
        # Another cwd is another view (it is bound into the sandbox): never the same zygote.
        elsewhere = plan_child(engine, ("/bin/true",), str(outside.parent), {})
        assert _zygote_for(engine, Network(), elsewhere, caps) not in (None, mine)
        net_plan = plan_child(netted, ("/bin/true",), str(tmp_path / "net"), {})
        assert net_plan.network == "proxy" and _zygote_for(netted, Network(), net_plan, caps) is None
        assert _zygote_for(engine, None, inside, caps) is None  # no run to close it: no zygote
        monkeypatch.setenv(ZYGOTE_ENV, "0")
        assert _zygote_for(engine, Network(), inside, caps) is None
    finally:
        Network.zygotes.close()
        engine.close()
        netted.close()


def test_a_command_never_goes_to_a_worker_that_is_leaving(agent, zygote, tmp_path):
    """Ten commands at once leave ten workers; when they end, the zygote retires the ones
    past its idle cap. A command sent right after must not go to a retiring worker (it
    came back as 126 with no output, in 19 of 20 tries, before the fix)."""
    root = str(tmp_path / "agent")
    for _ in range(5):
        results: dict[int, tuple[int | None, str, str]] = {}

        def one(i: int, results: dict[int, tuple[int | None, str, str]] = results) -> None:
            # The first worker forked ends last: it is retired, and it is first in line.
            delay = 0.4 if i == 0 else 0.1
            results[i] = _run(zygote, plan_child(agent, ("/bin/sh", "-c", f"sleep {delay}; echo {i}"), root, {}))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(10)]
        for thread in threads:
            thread.start()
            time.sleep(0.01)
        threads[0].join()
        after = _run(zygote, plan_child(agent, ("/bin/echo", "after"), root, {}))
        for thread in threads:
            thread.join()
        assert after == (0, "after\n", "")
        assert {i: results[i] for i in range(10)} == {i: (0, f"{i}\n", "") for i in range(10)}


def test_a_signal_for_a_command_that_ended_never_reaches_the_next_one(agent, zygote, tmp_path):
    """Workers are reused: a signal asked for a command after it ended (or read late by the
    zygote) must not stop the command its worker runs next."""
    root = str(tmp_path / "agent")
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        first = zygote.start(plan_child(agent, ("/bin/true",), root, {}), out_w, err_w)
    finally:
        os.close(out_w)
        os.close(err_w)
    os.close(out_r)
    os.close(err_r)
    assert first.wait(20) and first.code == 0
    results: list[tuple[int | None, str, str]] = []
    sleeper = plan_child(agent, ("/bin/sh", "-c", "sleep 0.5; echo ok"), root, {})
    second = threading.Thread(target=lambda: results.append(_run(zygote, sleeper)))
    second.start()
    time.sleep(0.2)  # the second command runs on the first one's worker by now
    first.signal("kill")
    second.join()
    assert results == [(0, "ok\n", "")]
