"""A raw wasm agent's own WASI writes obey the hard-link rule of ``fs.*``.

Layout: the agent root has a writable ``out/`` and a read-only ``data/``; a file
``outside.txt`` lies beside the agent root, outside every root. ``out/x`` is a hard
link to it (made before the run, or during it by a child process). Whatever the
C guest does through WASI, ``outside.txt`` keeps its bytes, size and times, each
refusal is a ``filesystem.host-refusal`` denial in the audit log, and writes to
the root's own files keep working.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hugind.errors import ExitCode, LimitExceeded
from tests.runtime.helpers import run_captured

SECRET = b"SECRET outside every root\n"
POLICY = {"filesystem": {"read": ["data"], "write": ["out"]}}


def _state(path: Path) -> tuple[bytes, int, int, int]:
    """Bytes, size, mtime, ctime (any change to the inode moves ctime; reading it does not)."""
    st = path.stat()
    return path.read_bytes(), st.st_size, st.st_mtime_ns, st.st_ctime_ns


@pytest.fixture
def linked(guest_agent):
    """(agent dir, outside file) with out/x a hard link to the outside file."""
    agent = guest_agent("wasi_links", runtime_fs_mode="read-write", permissions=POLICY)
    (agent / "out").mkdir()
    (agent / "data").mkdir()
    outside = agent.parent / "outside.txt"
    outside.write_bytes(SECRET)
    os.utime(outside, ns=(10**18, 10**18))  # so a time change is plain to see
    os.link(outside, agent / "out" / "x")
    (agent / "out" / "mine.txt").write_text("mine\n")
    return agent, outside


def _lines(agent: Path, *actions: str, **options) -> tuple[list[str], int]:
    """The guest's report, one "ACTION PATH: ok|ERRNO" line per action, and the run's denials."""
    out = run_captured(agent, *actions, **options)
    return out.result.value, out.result.denials


def _run(agent: Path, *actions: str, **options) -> tuple[dict[str, str], int]:
    lines, denials = _lines(agent, *actions, **options)
    return dict(line.rsplit(": ", 1) for line in lines), denials


def _refusals(audit: Path) -> list[dict]:
    entries = [json.loads(line) for line in audit.read_text().splitlines()]
    return [e for e in entries if e["rule"] == "filesystem.host-refusal"]


# Each way WASI can change a file, on the pre-existing hard link; the errno the
# guest sees and the interposed function that refuses.
ATTEMPTS = [
    ("write", "EACCES", "wasi.path_open"),  # O_WRONLY|O_CREAT|O_TRUNC, then write
    ("fopen", "EACCES", "wasi.path_open"),  # the fopen(path, "w")
    ("append", "EACCES", "wasi.path_open"),  # O_APPEND
    ("trunc", "EACCES", "wasi.path_open"),  # O_TRUNC alone truncates
    ("rdtrunc", "EACCES", "wasi.path_open"),  # O_RDONLY|O_TRUNC: wasmtime opens it writable
    ("rw", "EACCES", "wasi.path_open"),  # O_RDWR, pwrite at 0
    ("truncate", "EACCES", "wasi.path_open"),  # truncate(path): open + fd_filestat_set_size
    ("ftruncate-ro", "EPERM", "wasi.fd_filestat_set_size"),  # read-only fd (the OS refuses too)
    ("futimens-ro", "EPERM", "wasi.fd_filestat_set_times"),  # times through a read-only fd
    ("utimens", "EPERM", "wasi.path_filestat_set_times"),  # utimensat(path)
]


@pytest.mark.parametrize(("action", "errno_name", "func"), ATTEMPTS, ids=[a[0] for a in ATTEMPTS])
def test_a_wasi_write_through_a_hard_link_is_refused_and_audited(linked, tmp_path, action, errno_name, func):
    agent, outside = linked
    before = _state(outside)
    audit = tmp_path / "audit.jsonl"
    got, denials = _run(agent, f"{action}:out/x", audit_path=audit)
    assert got[f"{action} out/x"] == errno_name
    assert _state(outside) == before
    assert denials == 1
    [entry] = _refusals(audit)
    assert entry["decision"] == "deny"
    assert entry["capability"] == "filesystem"
    assert entry["request"]["op"] == func
    if func != "wasi.fd_filestat_set_size" and func != "wasi.fd_filestat_set_times":
        assert entry["request"]["path"] == "/out/x"  # the guest's path, joined to its preopen's name


def test_only_the_hard_link_is_refused_the_roots_own_files_stay_writable(linked):
    agent, outside = linked
    before = _state(outside)
    actions = [
        "write:out/x",
        "write:out/fresh.txt",
        "append:out/fresh.txt",
        "write:out/mine.txt",
        "futimens-ro:out/fresh.txt",
        "trunc:out/mine.txt",
        "append:out/mine.txt",
        "utimens:out/mine.txt",
        "read:out/x",  # reading a hard link is allowed, as with fs.read_text
    ]
    got, denials = _run(agent, *actions, strict=True)
    assert got.pop("write out/x") == "EACCES"
    assert set(got.values()) == {"ok"}, got
    assert denials == 1
    assert (agent / "out" / "fresh.txt").read_text() == "pwnedpwned"
    assert (agent / "out" / "mine.txt").read_text() == "pwned"
    assert (agent / "out" / "mine.txt").stat().st_mtime == 1
    assert _state(outside) == before


def test_a_link_to_a_read_only_root_is_not_a_way_to_write_it(linked):
    agent, _ = linked
    ro = agent / "data" / "ro.txt"
    ro.write_text("read-only data\n")
    os.link(ro, agent / "out" / "ro")
    got, denials = _run(agent, "write:out/ro", "append:out/ro", "utimens:out/ro")
    assert got == {"write out/ro": "EACCES", "append out/ro": "EACCES", "utimens out/ro": "EPERM"}
    assert ro.read_text() == "read-only data\n"
    assert denials == 3


def test_renaming_the_link_does_not_launder_it_and_renaming_over_it_drops_it(linked):
    agent, outside = linked
    before = _state(outside)
    (agent / "out" / "other").write_text("the root's own\n")
    lines, _ = _lines(agent, "rename:out/x:out/z", "write:out/z", "rename:out/other:out/z", "write:out/z")
    assert lines == [
        "rename out/x: ok",
        "write out/z: EACCES",  # the renamed link is still a link
        "rename out/other: ok",
        "write out/z: ok",  # out/z is now the root's own file
    ]
    assert (agent / "out" / "z").read_text() == "pwned"
    assert _state(outside)[:2] == before[:2]  # losing a link changes ctime, nothing else
    assert outside.stat().st_nlink == 1


def test_path_link_is_refused(linked):
    agent, _ = linked
    got, denials = _run(agent, "link:out/mine.txt:out/second", "link:out/x:out/third")
    assert got == {"link out/mine.txt": "EPERM", "link out/x": "EPERM"}
    assert not (agent / "out" / "second").exists()
    assert not (agent / "out" / "third").exists()
    assert (agent / "out" / "mine.txt").stat().st_nlink == 1
    assert denials == 2


def test_a_confined_child_cannot_link_an_outside_file_into_a_root(guest_agent):
    """With the kernel confining children, the outside file is not in the child's view."""
    permissions = {**POLICY, "shell": {"allow": True, "whitelist": ["ln"]}}
    agent = guest_agent("wasi_links", runtime_fs_mode="read-write", permissions=permissions)
    (agent / "out").mkdir()
    (agent / "data").mkdir()
    (agent.parent / "outside.txt").write_bytes(SECRET)
    got, _ = _run(agent, "spawn-ln", "../outside.txt", "out/y")
    assert got.pop("spawn-ln ") != "ok" and not (agent / "out" / "y").exists()


def test_a_hard_link_made_during_the_run_by_a_child_is_refused(guest_agent, monkeypatch):
    """The agent itself has `ln` run (shell.spawn), then opens the new link through WASI:
    the check is on the inode opened, so a link made after the run started is caught.
    The child runs unconfined here (as on a machine without the kernel layers), because
    a confined one cannot make that link at all (test above)."""
    monkeypatch.setenv("HUGIND_CONFINE_DISABLE", "bwrap,namespaces,landlock,cgroup")
    permissions = {**POLICY, "shell": {"allow": True, "whitelist": ["ln"]}}
    agent = guest_agent("wasi_links", runtime_fs_mode="read-write", permissions=permissions)
    (agent / "out").mkdir()
    (agent / "data").mkdir()
    outside = agent.parent / "outside.txt"
    outside.write_bytes(SECRET)
    before = _state(outside)
    actions = ["write:out/y", "append:out/y", "trunc:out/y", "truncate:out/y", "utimens:out/y"]
    got, denials = _run(agent, "spawn-ln", "../outside.txt", "out/y", *actions)
    assert got.pop("spawn-ln ") == "ok"
    assert (agent / "out" / "y").stat().st_ino == outside.stat().st_ino  # the child really made the link
    assert got == {
        "write out/y": "EACCES",
        "append out/y": "EACCES",
        "trunc out/y": "EACCES",
        "truncate out/y": "EACCES",
        "utimens out/y": "EPERM",
    }
    assert _state(outside)[:3] == before[:3]  # the child's link moved ctime, nothing else did
    assert denials == len(actions)


def test_both_roads_agree_and_strict_exits_3(linked, cli, tmp_path):
    agent, outside = linked
    before = _state(outside)
    audit = tmp_path / "audit.jsonl"
    run = cli("run", str(agent), "--strict", "--audit", str(audit), "--", "fswrite:out/x", "fopen:out/x")
    assert run.code == ExitCode.POLICY_DENIED, run.stderr
    assert json.loads(run.stdout) == ["fswrite out/x: EACCES", "fopen out/x: EACCES"]
    assert "denied 2 requests" in run.stderr
    assert [e["request"]["op"] for e in _refusals(audit)] == ["fs.write_text", "wasi.path_open"]
    assert _state(outside) == before


@pytest.mark.parametrize("limit", [{"timeout": 1}, {"fuel": 2_000_000}], ids=["deadline", "fuel"])
def test_a_limit_hit_inside_an_interposed_call_stops_the_run_as_usual(guest_agent, limit):
    agent = guest_agent("wasi_links", runtime_fs_mode="read-write", permissions={**POLICY, "limits": limit})
    (agent / "out").mkdir()
    with pytest.raises(LimitExceeded, match="deadline exceeded" if "timeout" in limit else "fuel exhausted"):
        run_captured(agent, "loop-open:out/f")
