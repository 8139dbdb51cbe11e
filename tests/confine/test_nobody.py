"""As root, the launcher runs children as the host's nobody (hugind/confine/nobody.py).

Each test starts a real confined child through the launcher and looks at it, or at
what it left, from the host: its credentials in the host's /proc, the owner of the
files it wrote, the limits of what it can do to them. Root only: as any other
user a child is that user already.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from hugind.confine.command import confined
from hugind.confine.plan import ChildPlan, Rlimits
from hugind.confine.probe import Capabilities, capabilities
from hugind.confine.report import confinement_lines
from hugind.policy.model import Policy
from tests.redteam.helpers import js, run_attack

NOBODY = 65534


def _caps(monkeypatch: pytest.MonkeyPatch, mode: str) -> Capabilities:
    if mode == "launcher":
        monkeypatch.setenv("HUGIND_BWRAP", "none")
    else:
        monkeypatch.delenv("HUGIND_BWRAP", raising=False)
    caps = capabilities()
    if not caps.root:
        pytest.skip("hugind does not run as root: its children are its own uid already")
    if mode == "bwrap" and caps.bwrap is None:
        pytest.skip(f"bubblewrap unavailable: {caps.bwrap_problem}")
    if caps.child_user is None:
        pytest.skip(f"this machine cannot run children as nobody: {caps.nobody_problem}")
    return caps


@pytest.fixture(params=["bwrap", "launcher"])
def caps(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Capabilities:
    """Each test in bubblewrap (started by nobody.py) and in hugind's own launcher."""
    return _caps(monkeypatch, request.param)


def _plan(
    argv: list[str], write: list[str], cwd: str, read: tuple[str, ...] = (), rlimits: Rlimits = Rlimits()
) -> ChildPlan:
    system = ("/usr", "/etc", *(d for d in ("/bin", "/lib", "/lib64", "/sbin") if not os.path.islink(d)))
    return ChildPlan(
        argv=tuple(argv),
        cwd=cwd,
        env={"PATH": "/usr/bin:/bin"},
        read=(*system, *read),
        write=tuple(write),
        hide=(),
        rlimits=rlimits,
    )


def _run(plan: ChildPlan, caps: Capabilities) -> subprocess.CompletedProcess:
    launch = confined(plan, caps)
    try:
        return subprocess.run(launch.argv, env=launch.env, cwd=plan.cwd, capture_output=True, timeout=30)
    finally:
        launch.release()


def _host_status(marker: str, deadline: float) -> dict[str, str]:
    """The host's /proc status of the process whose argv is ``sleep marker``."""
    while time.monotonic() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if argv[:2] == [b"sleep", marker.encode()]:
                    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
                    return dict(line.split(":", 1) for line in lines if ":" in line)
            except OSError:
                continue
        time.sleep(0.02)
    raise AssertionError(f"no process 'sleep {marker}' appeared")


def test_the_probe_finds_the_layer_and_check_names_it(caps: Capabilities, tmp_path: Path) -> None:
    assert caps.child_user == "nobody (65534): user namespace + idmapped roots"
    text = "\n".join(confinement_lines(Policy(agent_root=tmp_path), caps))
    assert "user on the host: nobody (65534)" in text


def test_the_child_is_nobody_on_the_host_with_no_group(caps: Capabilities, tmp_path: Path) -> None:
    marker = "9.25"
    launch = confined(_plan(["/bin/sh", "-c", f"exec sleep {marker}"], [str(tmp_path)], str(tmp_path)), caps)
    proc = subprocess.Popen(launch.argv, env=launch.env, cwd=str(tmp_path))
    try:
        status = _host_status(marker, time.monotonic() + 15)
    finally:
        proc.kill()
        proc.wait()
        launch.release()
    assert status["Uid"].split() == [str(NOBODY)] * 4
    assert status["Gid"].split() == [str(NOBODY)] * 4
    assert status["Groups"].split() == []
    assert status["CapEff"].strip() == "0" * 16


def test_files_it_writes_keep_the_users_owner(caps: Capabilities, tmp_path: Path) -> None:
    own = tmp_path / "mine.txt"
    own.write_text("root's file\n")
    own.chmod(0o600)
    script = "id -u; cat mine.txt; echo more >> mine.txt; echo new > made.txt; mkdir dir; ls -ln mine.txt"
    out = _run(_plan(["/bin/sh", "-c", script], [str(tmp_path)], str(tmp_path)), caps)
    assert out.returncode == 0, out.stderr.decode()
    lines = out.stdout.decode().splitlines()
    # Inside, the child is uid 0 and root's files look like its own.
    assert lines[0] == "0"
    assert lines[1] == "root's file"
    assert lines[2].split()[2:4] == ["0", "0"]
    assert own.read_text() == "root's file\nmore\n"
    for made in (tmp_path / "made.txt", tmp_path / "dir"):
        st = made.lstat()
        assert (st.st_uid, st.st_gid) == (0, 0), made


def test_a_root_only_parent_does_not_hide_a_granted_root(caps: Capabilities, tmp_path: Path) -> None:
    """The roots are opened as root, before the child's identity: a 0700 parent (/root) is
    no obstacle to a root granted inside it."""
    parent = tmp_path / "private"
    work = parent / "work"
    work.mkdir(parents=True)
    parent.chmod(0o700)
    out = _run(_plan(["/bin/sh", "-c", "echo hi > note && cat note"], [str(work)], str(work)), caps)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout == b"hi\n"
    assert (work / "note").stat().st_uid == 0


def test_it_cannot_give_a_file_away_or_make_it_setuid(caps: Capabilities, tmp_path: Path) -> None:
    target = tmp_path / "f"
    target.write_text("x")
    script = "chown 1000 f; echo chown=$?; chmod 4755 f; echo chmod=$?; chgrp 1000 f; echo chgrp=$?"
    out = _run(_plan(["/bin/sh", "-c", script], [str(tmp_path)], str(tmp_path)), caps)
    assert out.returncode == 0, out.stderr.decode()
    assert out.stdout.decode().split() == ["chown=1", "chmod=1", "chgrp=1"]
    st = target.stat()
    assert (st.st_uid, st.st_gid, st.st_mode & 0o7777) == (0, 0, 0o644)


def test_a_root_it_cannot_map_refuses_the_child(caps: Capabilities, tmp_path: Path) -> None:
    """devpts cannot be idmapped: a writable root there is refused, not granted as root."""
    out = _run(_plan(["/bin/true"], ["/dev/pts"], str(tmp_path), read=(str(tmp_path),)), caps)
    assert out.returncode == 126
    message = out.stderr.decode()
    assert message.startswith("hugind-confine: cannot run the child as nobody")
    assert "writable root /dev/pts" in message


@pytest.mark.parametrize("mode", ["bwrap", "launcher"])
def test_without_a_cgroup_the_process_limit_binds_a_root_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str
) -> None:
    """RLIMIT_NPROC spares root, not nobody: without a pids cgroup a root-run hugind's
    children still cannot fork past the plan's count."""
    _caps(monkeypatch, mode)
    monkeypatch.setenv("HUGIND_CONFINE_DISABLE", "cgroup")
    caps = capabilities()
    assert caps.pids_cgroup is None and caps.process_cap == "RLIMIT_NPROC"
    # Builtins only: each line is a sleep started; the shell stops at the fork it is refused.
    script = "i=0; while [ $i -lt 20 ]; do i=$((i+1)); sleep 3 & echo $i; done"
    out = _run(_plan(["/bin/sh", "-c", script], [str(tmp_path)], str(tmp_path), rlimits=Rlimits(processes=6)), caps)
    started = len(out.stdout.split())
    assert out.returncode != 0 and 0 < started < 6, out


@pytest.mark.parametrize("mode", ["bwrap", "launcher"])
def test_disabling_the_layer_keeps_the_child_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, mode: str) -> None:
    _caps(monkeypatch, mode)
    monkeypatch.setenv("HUGIND_CONFINE_DISABLE", "nobody")
    caps = capabilities()
    assert not caps.nobody and not caps.bwrap_nobody and caps.child_user is None
    out = _run(_plan(["/bin/sh", "-c", "echo x > f"], [str(tmp_path)], str(tmp_path)), caps)
    assert out.returncode == 0, out.stderr.decode()
    assert (tmp_path / "f").stat().st_uid == 0


def test_every_command_of_a_run_is_nobody(caps: Capabilities, tmp_path: Path) -> None:
    """Through the whole pipeline: the shell commands of a JS agent (the run's zygote and
    its workers), seen from the host while each one runs."""
    work = tmp_path / "agent" / "ws"
    work.mkdir(parents=True)
    marks = ["2.311", "2.312"]
    body = "".join(
        f"await run_command({js(f'echo {n} > {n}.txt; sleep {m}')});\n" for n, m in zip("ab", marks, strict=True)
    )
    permissions = {
        "shell": {"allow": True, "timeout": 20, "working_dir": "ws"},
        "filesystem": {"write": ["ws"]},
    }
    seen: list[dict[str, str]] = []
    watcher = threading.Thread(target=lambda: seen.extend(_host_status(m, time.monotonic() + 30) for m in marks))
    watcher.start()
    out = run_attack(tmp_path / "agent", body + "return 'ok';", permissions)
    watcher.join(timeout=60)
    assert out.value["value"] == "ok", (out.value, out.stderr)
    assert [s["Uid"].split() for s in seen] == [[str(NOBODY)] * 4] * 2
    assert [(work / n).stat().st_uid for n in ("a.txt", "b.txt")] == [0, 0]
