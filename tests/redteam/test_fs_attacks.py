"""Filesystem attacks by real JS agents: every escape is denied and leaves the disk untouched.

Layout (``build_fs_layout`` from the policy vectors): the agent root has a
readable ``data/``, a writable ``out/``, a decoy ``data-evil/`` and symlinks
that lead to ``../outside/secret.txt``. Each test snapshots the whole tmp
tree before the attack and compares after it, so "denied" also means
"nothing was read out, written, truncated, renamed or removed".
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.policy.policy_vectors import FS_POLICY, FS_READ_ESCAPES, FS_WRITE_ESCAPES, build_fs_layout
from tests.redteam.helpers import assert_denied, js, probe_source, write_manifest

SECRET = "TOP SECRET"
PUBLIC = "public data"
SKIP = ("main.js", "agent.yaml")


def snapshot(top: Path) -> dict[str, str]:
    """Every entry under ``top``: file contents, link targets, dirs (the run's own files aside)."""
    state: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(top))
            if name in SKIP or name.endswith(".audit.jsonl"):
                continue
            if path.is_symlink():
                state[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                state[rel] = "dir"
            else:
                state[rel] = "file:" + path.read_bytes().decode("latin-1")
    return state


@pytest.fixture
def layout(agent_dir):
    root = agent_dir()
    outside = root.parent / "outside"
    build_fs_layout(root, outside)
    return root, outside


def _fill(text: str, outside: Path) -> str:
    return text.replace("{outside}", str(outside))


# --- reads out of the roots (17 agents, one per vector) --------------------------------


@pytest.mark.parametrize(("path", "rule", "fragment"), FS_READ_ESCAPES, ids=[v[0] for v in FS_READ_ESCAPES])
def test_read_escape_is_denied(attack, layout, path, rule, fragment):
    root, outside = layout
    before = snapshot(root.parent)
    out = attack(f"return fs.read_text({js(_fill(path, outside))});", FS_POLICY, root=root)
    assert_denied(out, rule, fragment, capability="filesystem")
    assert SECRET not in json.dumps(out.value)
    if "{outside}" not in path:
        assert str(outside) not in out.value["message"]  # denials quote the guest's path, never the resolved one
    assert snapshot(root.parent) == before


@pytest.mark.parametrize(
    "path",
    [
        "../" * 40 + "etc/passwd",
        "data/" + "../" * 40 + "etc/passwd",
        "out/./../data/./../../outside/secret.txt",
        "data/" + "sub/../" * 200 + "../../outside/secret.txt",
    ],
    ids=["deep-dotdot", "deep-from-root", "dot-mix", "long-zigzag"],
)
def test_deep_traversal_is_denied(attack, layout, path):
    root, _ = layout
    (root / "data" / "sub").mkdir()
    out = attack(f"return fs.read_text({js(path)});", FS_POLICY, root=root)
    assert_denied(out, "filesystem.outside-roots", "outside the readable roots")
    assert "root:" not in json.dumps(out.value) and SECRET not in json.dumps(out.value)


def test_absolute_etc_passwd_and_listing_root_are_denied(attack, layout):
    root, _ = layout
    body = """
    const r = [];
    for (const f of [() => fs.read_text('/etc/passwd'), () => fs.list_dir('/'),
                     () => fs.exists('/etc/shadow'),
                     () => fs.stat('/etc/passwd'), () => fs.realpath('/etc')]) {
      try { r.push({ok: true, v: f()}); } catch (e) { r.push({ok: false, name: e.name, message: e.message}); }
    }
    return r;
    """
    out = attack(body, FS_POLICY, root=root)
    results = out.value["value"]
    assert [r["ok"] for r in results] == [False] * 5, results
    assert all(r["name"] == "PermissionDenied" and "outside the readable roots" in r["message"] for r in results)
    assert [e["rule"] for e in out.denied] == ["filesystem.outside-roots"] * 5


def test_prefix_confusion_between_absolute_sibling_roots(attack, agent_dir, tmp_path):
    """A root /x/data must not contain /x/data-evil, however the path is spelled."""
    shared = tmp_path / "shared"
    (shared / "data").mkdir(parents=True)
    (shared / "data-evil").mkdir()
    (shared / "data" / "ok.txt").write_text("fine")
    (shared / "data-evil" / "loot.txt").write_text(SECRET)
    base = str(shared / "data")
    body = f"""
    const ok = fs.read_text({js(base + "/ok.txt")});
    const r = [ok];
    for (const p of [{js(base + "-evil/loot.txt")}, {js(base + "/../data-evil/loot.txt")},
                     {js(base + "/./../data-evil/loot.txt")}, {js(base + "-evil/")}]) {{
      try {{ r.push(fs.read_text(p)); }} catch (e) {{ r.push(e.name + ': ' + e.message); }}
    }}
    return r;
    """
    out = attack(body, {"filesystem": {"read": [base]}})
    value = out.value["value"]
    assert value[0] == "fine"
    assert all(v.startswith("PermissionDenied: ") and "outside the readable roots" in v for v in value[1:]), value
    assert SECRET not in json.dumps(out.value)
    assert [e["rule"] for e in out.denied] == ["filesystem.outside-roots"] * 4


def test_preexisting_symlink_cannot_be_listed_or_stat_followed(attack, layout):
    root, _ = layout
    body = """
    const r = {names: JSON.parse(fs.list_dir('data'))};
    r.lstat = JSON.parse(fs.stat('data/dirlink/')) ;
    return r;
    """
    out = attack(body, FS_POLICY, root=root)
    assert_denied(out, "filesystem.outside-roots", "outside the readable roots")
    body = "return [fs.exists('data/link_out'), fs.is_file('data/link_out')];"
    out = attack(body, FS_POLICY, root=root)
    assert_denied(out, "filesystem.outside-roots", "exists 'data/link_out' denied")
    out = attack("return JSON.parse(fs.stat('data/link_out'));", FS_POLICY, root=root)
    assert_denied(out, "filesystem.outside-roots", "stat 'data/link_out' denied")


# --- guest-influenced symlinks (made through an allowed shell) --------------------------

SHELL_LN = {**FS_POLICY, "shell": {"allow": True, "whitelist": ["ln"], "timeout": 10}}


@pytest.mark.parametrize(
    ("op", "fragment"),
    [
        ("fs.read_text('out/glink')", "read_text 'out/glink' denied"),
        ("fs.list_dir('out/gdir/')", "list_dir 'out/gdir/' denied"),
        ("fs.read_text('out/gdir/secret.txt')", "read_text 'out/gdir/secret.txt' denied"),
        ("fs.write_text('out/gdir/pwned.txt', 'x')", "write_text 'out/gdir/pwned.txt' denied"),
        ("fs.write_text('out/glink', 'overwritten')", "write_text 'out/glink' denied"),
        ("fs.mkdir('out/gdir/a/b', true)", "mkdir 'out/gdir/a/b' denied"),
        ("fs.remove('out/gdir/', true)", "remove 'out/gdir/' denied"),
        ("fs.copy('out/glink', 'out/copied.txt')", "copy 'out/glink' denied"),
        ("fs.rename('out/gdir/secret.txt', 'out/moved.txt')", "rename 'out/gdir/secret.txt' denied"),
    ],
    ids=[
        "read",
        "trailing-slash-list",
        "through-dir",
        "write-through",
        "write-link",
        "mkdir-through",
        "remove-trailing-slash",
        "copy-link",
        "rename-through",
    ],
)
def test_symlink_made_by_the_guest_via_shell_does_not_lead_out(attack, layout, op, fragment):
    root, outside = layout
    body = f"""
    const a = await run_command('ln -s ../../outside/secret.txt out/glink', {{detailed: true}});
    const b = await run_command('ln -s ../../outside out/gdir', {{detailed: true}});
    if (a.exit_code !== 0 || b.exit_code !== 0) return ['ln failed', a, b];
    return {op};
    """
    out = attack(body, SHELL_LN, root=root)
    assert_denied(out, "filesystem.outside-roots", fragment)
    assert os.readlink(root / "out" / "glink") == "../../outside/secret.txt"  # the links really exist
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET
    assert not (root / "out" / "copied.txt").exists() and not (root / "out" / "moved.txt").exists()


def test_removing_a_guest_made_dir_link_removes_only_the_link(attack, layout):
    root, outside = layout
    body = """
    await run_command('ln -s ../../outside out/gdir');
    fs.remove('out/gdir', true);
    return fs.exists('out/gdir');
    """
    out = attack(body, SHELL_LN, root=root)
    assert out.value == {"ok": True, "value": False}
    assert (outside / "secret.txt").read_text() == SECRET


# --- /proc, /dev ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "fragment"),
    [
        ("/proc/self/environ", "/proc is off limits"),
        ("/proc/self/cmdline", "/proc is off limits"),
        ("/proc/self/mem", "/proc is off limits"),
        ("/proc/1/environ", "/proc is off limits"),
        ("/proc/self/fd/0", "is off limits"),  # stdin: /dev/null or a pipe
        ("/dev/urandom", "/dev is off limits"),
        ("/dev/shm", "/dev is off limits"),
        ("/sys/class/net", "/sys is off limits"),
    ],
)
def test_special_dirs_are_off_limits_whatever_the_roots(attack, path, fragment):
    """/proc, /sys and /dev stay closed whatever the roots. (Listing ``/`` itself is now
    refused before the run: it contains hugind's own files, see the attacks at the end.)"""
    out = attack(f"return fs.read_text({js(path)});", {"filesystem": {"read": ["."]}})
    assert_denied(out, "filesystem.special", fragment)
    assert "PATH=" not in json.dumps(out.value)


@pytest.mark.parametrize("via", ["/proc/self/root", "/proc/thread-self/root", "/proc/self/cwd/.."])
def test_proc_magic_links_are_resolved_before_the_check(attack, layout, via):
    """/proc/self/root/<agent>/notes.txt is notes.txt: outside the roots, however it is reached."""
    root, _ = layout
    target = str(root / "notes.txt") if "root" in via else "pyproject.toml"
    out = attack(f"return fs.read_text({js(via + '/' + target.lstrip('/'))});", FS_POLICY, root=root)
    assert_denied(out, "filesystem.outside-roots", "outside the readable roots")
    assert "agent root file" not in json.dumps(out.value)


# --- read-only bypasses -------------------------------------------------------------------


CALLS = {
    "fs.write_text": ("path", "data"),
    "fs.append_text": ("path", "data"),
    "fs.write_bytes": ("path", "data"),
    "fs.rename": ("src", "dst"),
    "fs.copy": ("src", "dst"),
    "fs.remove": ("path",),
    "fs.mkdir": ("path",),
}


@pytest.mark.parametrize(
    ("op", "args", "rule", "fragment"),
    FS_WRITE_ESCAPES,
    ids=[f"{v[0]}:{next(iter(v[1].values()))}" for v in FS_WRITE_ESCAPES],
)
def test_write_escape_is_denied_and_changes_nothing(attack, layout, op, args, rule, fragment):
    root, outside = layout
    before = snapshot(root.parent)
    call_args = ", ".join(js(_fill(args[k], outside)) for k in CALLS[op])
    out = attack(f"return {op}({call_args});", FS_POLICY, root=root)
    assert_denied(out, rule, fragment, capability="filesystem")
    assert snapshot(root.parent) == before
    assert (root / "data" / "readme.txt").read_text() == PUBLIC


def test_read_only_mode_refuses_every_write_to_a_write_root(attack, layout):
    root, _ = layout
    before = snapshot(root.parent)
    body = """
    const r = [];
    for (const f of [() => fs.write_text('out/mine.txt', ''), () => fs.append_text('out/mine.txt', 'x'),
                     () => fs.remove('out/mine.txt'), () => fs.rename('out/mine.txt', 'out/x'),
                     () => fs.copy('data/readme.txt', 'out/mine.txt'), () => fs.mkdir('out/d')]) {
      try { f(); r.push('done'); } catch (e) { r.push(e.name + ': ' + e.message); }
    }
    return [fs.read_text('out/mine.txt'), r];
    """
    out = attack(body, FS_POLICY, root=root, manifest={"runtime_fs_mode": "read-only"})
    content, results = out.value["value"]
    assert content == "written by the agent"
    assert all(r.startswith("PermissionDenied: ") and "runtime_fs_mode read-only" in r for r in results), results
    assert {e["rule"] for e in out.denied} == {"filesystem.read-only"}
    assert snapshot(root.parent) == before


def test_write_through_a_preexisting_hard_link_is_refused(attack, layout):
    root, _ = layout
    os.link(root / "data" / "readme.txt", root / "out" / "hardlink")
    out = attack("fs.write_text('out/hardlink', 'pwned');", FS_POLICY, root=root)
    assert_denied(out, "filesystem.write:out", "several hard links", audited=False)
    out = attack("fs.append_text('out/hardlink', 'pwned');", FS_POLICY, root=root)
    assert_denied(out, "filesystem.write:out", "several hard links", audited=False)
    assert (root / "data" / "readme.txt").read_text() == PUBLIC


def test_copy_onto_a_hard_link_leaves_the_read_only_file_intact(attack, layout):
    root, _ = layout
    os.link(root / "data" / "readme.txt", root / "out" / "hardlink")
    out = attack("fs.copy('out/mine.txt', 'out/hardlink');", FS_POLICY, root=root)
    assert out.value["ok"] is False and out.value["name"] == "PermissionDenied"
    assert (root / "data" / "readme.txt").read_text() == PUBLIC


def test_rename_onto_a_link_to_read_only_replaces_the_link_not_the_target(attack, layout):
    root, _ = layout
    out = attack(
        "fs.rename('out/mine.txt', 'out/link_to_data'); return fs.read_text('data/readme.txt');",
        FS_POLICY,
        root=root,
    )
    assert out.value == {"ok": True, "value": PUBLIC}
    assert not (root / "out" / "link_to_data").is_symlink()
    assert (root / "data" / "readme.txt").read_text() == PUBLIC


def test_copy_of_a_tree_with_links_out_is_refused_whole(attack, layout):
    root, _ = layout
    out = attack("fs.copy('data', 'out/stolen');", FS_POLICY, root=root)
    assert_denied(out, "filesystem.write:out", "copy refuses symlinks", audited=False)
    assert not (root / "out" / "stolen").exists()


# --- malformed paths -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("'data/readme.txt\\u0000../../outside/secret.txt'", "NUL byte"),
        ("'\\u0000'", "NUL byte"),
        ("'data/' + 'a/'.repeat(3000)", "longer than 4096 bytes"),
        ("'data/' + 'x'.repeat(300)", "component over 255 bytes"),
        ("''", "non-empty string"),
    ],
    ids=["nul-truncation", "nul-only", "huge-path", "huge-component", "empty"],
)
def test_malformed_paths_are_refused_before_any_io(attack, layout, expr, fragment):
    root, _ = layout
    out = attack(f"return fs.read_text({expr});", FS_POLICY, root=root)
    assert_denied(out, "filesystem.path-syntax", fragment, kind="InvalidArgument")
    if expr == "''":
        return
    out = attack(f"fs.write_text('out/x' + {expr}, 'x');", FS_POLICY, root=root)
    assert_denied(out, "filesystem.path-syntax", fragment, kind="InvalidArgument")
    assert sorted(p.name for p in (root / "out").iterdir()) == sorted(
        ["mine.txt", "dirlink", "link_out", "link_to_data", "dangling_out"]
    )


def test_fifo_in_a_readable_root_cannot_hang_a_read(attack, layout):
    root, _ = layout
    os.mkfifo(root / "data" / "pipe")
    out = attack("return fs.read_text('data/pipe');", FS_POLICY, root=root)
    assert out.value["ok"] is False
    assert out.value["name"] == "IOError" and "not a regular file" in out.value["message"]


def test_import_through_a_symlink_out_of_the_agent_is_refused(attack, layout):
    root, outside = layout
    (outside / "steal.js").write_text(f"export default {js(SECRET)};")
    os.symlink(outside / "steal.js", root / "evil.js")
    out = attack("const m = await import('./evil.js'); return m.default;", FS_POLICY, root=root)
    assert out.value["ok"] is False and out.value["name"] == "ModuleError"
    assert "leads outside the agent root" in out.value["message"]
    assert SECRET not in json.dumps(out.value)


@pytest.mark.parametrize("spec", ["qjs:os", "qjs:std", "std", "os", "/etc/passwd.js", "../outside/steal.js"])
def test_engine_modules_and_outside_imports_are_unreachable(attack, layout, spec):
    root, outside = layout
    (outside / "steal.js").write_text(f"export default {js(SECRET)};")
    out = attack(
        f"const m = await import({js(spec)}); return [m.default, typeof native, typeof std];",
        FS_POLICY,
        root=root,
    )
    assert out.value["ok"] is False and out.value["name"] == "ModuleError", out.value
    assert SECRET not in json.dumps(out.value)


@pytest.mark.parametrize(
    "path", ["DATA/readme.txt", "Data/../notes.txt", "\uff44ata/readme.txt", "data\u2215readme.txt"]
)
def test_case_and_unicode_aliases_are_not_the_root(attack, layout, path):
    root, _ = layout
    out = attack(f"return fs.read_text({js(path)});", FS_POLICY, root=root)
    assert_denied(out, "filesystem.outside-roots", "outside the readable roots")


def test_scratch_mode_confines_writes_and_vanishes(attack, layout):
    root, _ = layout
    before = snapshot(root.parent)
    body = """
    fs.write_text('note.txt', 'in scratch');
    const where = (await run_command('pwd', {detailed: true})).stdout.trim();
    const r = {where, cwd: fs.cwd(), own: fs.read_text('note.txt'), data: fs.read_text(DATA)};
    try { fs.write_text(MINE, 'x'); r.escape = 'written'; }
    catch (e) { r.escape = e.name + ': ' + e.message; }
    return r;
    """
    body = body.replace("DATA", js(str(root / "data" / "readme.txt"))).replace(
        "MINE", js(str(root / "out" / "mine.txt"))
    )
    out = attack(
        body,
        {**FS_POLICY, "shell": {"allow": True, "whitelist": ["pwd"]}},
        root=root,
        manifest={"runtime_fs_mode": "scratch"},
    )
    value = out.value["value"]
    assert (value["cwd"], value["own"], value["data"]) == (".", "in scratch", PUBLIC)
    assert (
        value["escape"].startswith("PermissionDenied: ")
        and "outside the writable roots (<scratch>)" in (value["escape"])
    )
    assert not Path(value["where"]).exists()  # the scratch dir is gone after the run
    assert snapshot(root.parent) == before


# The states of out/d the race tests' flippers cycle through, as a read of out/d sees them.
STATE_OF = """
function stateOf(path) {
  try { return fs.is_dir(path) ? 'dir' : 'other'; }
  catch (e) { return e.name === 'PermissionDenied' ? 'link' : 'absent'; }
}
"""
# Bounded attempts: on this 2-core machine the swap lands inside a read within a few dozen
# attempts; the bound only keeps a machine that cannot hit the window from hanging.
RACE_ATTEMPTS = 4000
RACE_SECONDS = 15


def test_directory_swapped_for_a_symlink_after_the_check_never_leaks(attack, layout):
    """Check-then-open race: a shell child flips out/d between a real dir and a link out while the
    agent reads out/d/f in a loop. Every read returns the real file or fails; the secret never leaks.

    The race must have happened: the state of out/d is taken right before and right after each
    read, and a read whose two states differ ran while a swap landed ("in the window"). The
    test needs at least one such read, and sees the flipper's both states (the dir and the link)."""
    root, outside = layout
    (outside / "f").write_text(SECRET)
    (root / "out" / "d").mkdir()
    (root / "out" / "d" / "f").write_text("fine")
    flipper = (
        ": > out/ready; while [ ! -e out/stop ]; do mv -T out/d out/d_tmp; ln -s ../../outside out/d; "
        "rm out/d; mv -T out/d_tmp out/d; done"
    )
    body = f"""{STATE_OF}
    const flipping = run_command({js(flipper)}, {{detailed: true}});
    for (let n = 0; !fs.exists('out/ready') && n < 1000; n++) await new Promise((r) => setTimeout(r, 10));
    const seen = {{}}, states = {{}};
    let attempts = 0, in_window = 0, in_window_results = {{}};
    const end = Date.now() + {RACE_SECONDS * 1000};
    while (attempts < {RACE_ATTEMPTS} && Date.now() < end && in_window < 20) {{
      attempts++;
      const before = stateOf('out/d');
      let key;
      try {{ key = 'ok:' + fs.read_text('out/d/f'); }} catch (e) {{ key = e.name + ':' + e.message; }}
      const after = stateOf('out/d');
      states[before] = (states[before] || 0) + 1;
      seen[key] = (seen[key] || 0) + 1;
      if (before !== after) {{ in_window++; in_window_results[key] = (in_window_results[key] || 0) + 1; }}
    }}
    fs.write_text('out/stop', '');
    const shell = await flipping;
    return {{seen, states, attempts, in_window, in_window_results, timed_out: shell.timed_out}};
    """
    out = attack(body, {**FS_POLICY, "shell": {"allow": True, "timeout": 30}}, root=root)
    value = out.value["value"]
    assert SECRET not in json.dumps(value)
    assert value["timed_out"] is False
    assert value["states"].get("dir") and value["states"].get("link"), value  # the flipper flipped
    if value["in_window"] == 0:  # flipping, but never during a read: the window is out of reach here
        pytest.skip(f"no swap landed during a read in {value['attempts']} attempts: {value['states']}")
    assert value["in_window"] >= 1, value
    for key in value["seen"]:
        allowed = ("PermissionDenied:", "NotFound:", "IOError:")
        assert key == "ok:fine" or key.startswith(allowed), key
    # A read through the link was refused as outside the roots, on the record.
    assert any("outside the readable roots" in key for key in value["seen"]), value["seen"]
    assert {e["rule"] for e in out.denied} <= {"filesystem.outside-roots", "filesystem.unstable"}, out.denied
    assert (outside / "f").read_text() == SECRET


FLIPPER = """\
import os
open('out/ready', 'w').close()
while not os.path.exists('out/stop'):
    try:
        os.symlink('../../outside', 'out/d')
    except FileExistsError:
        pass
    os.unlink('out/d')
"""
UNSTABLE = "changed while it was being resolved"


def test_path_changing_during_the_check_is_an_audited_denial(attack, layout):
    """A link that comes and goes while the check resolves out/d/f: the check does not guess, it
    refuses with ``filesystem.unstable`` and audits it. The race must have happened (at least
    one read refused as unstable, its audit entry present), within bounded attempts."""
    root, outside = layout
    (outside / "f").write_text(SECRET)
    body = f"""
    const flipping = spawn('python3', ['-c', {js(FLIPPER)}], {{detailed: true}});
    for (let n = 0; !fs.exists('out/ready') && n < 1000; n++) await new Promise((r) => setTimeout(r, 10));
    const seen = {{}};
    let attempts = 0, unstable = 0, message = null;
    const end = Date.now() + {RACE_SECONDS * 1000};
    while (attempts < {RACE_ATTEMPTS * 5} && Date.now() < end && unstable < 3 && !seen.InternalError) {{
      attempts++;
      let key;
      try {{ key = 'ok:' + fs.read_text('out/d/f'); }} catch (e) {{
        key = e.name;
        if (e.message.includes({js(UNSTABLE)})) {{ unstable++; message = e.name + ': ' + e.message; }}
      }}
      seen[key] = (seen[key] || 0) + 1;
    }}
    fs.write_text('out/stop', '');
    await flipping;
    return {{seen, attempts, unstable, message}};
    """
    out = attack(body, {**FS_POLICY, "shell": {"allow": True, "timeout": 30}}, root=root)
    value = out.value["value"]
    assert SECRET not in json.dumps(value)
    assert set(value["seen"]) <= {"NotFound", "PermissionDenied", "IOError"}, value
    assert value["seen"].get("PermissionDenied") and value["seen"].get("NotFound"), value  # it flipped
    if value["unstable"] == 0:  # flipping, but never during a check: the window is out of reach here
        pytest.skip(f"the link never changed during a check in {value['attempts']} attempts: {value['seen']}")
    # The errno of the walk that lost the race (ENOENT, ENOTDIR or ELOOP) ends the message.
    prefix = f"PermissionDenied: filesystem: 'out/d/f' {UNSTABLE} ("
    assert value["message"].startswith(prefix) and value["message"].endswith(")"), value
    # One audit entry per unstable refusal, naming the rule, the op and the path.
    unstable = [e for e in out.denied if e["rule"] == "filesystem.unstable"]
    assert len(unstable) == value["unstable"], out.denied[-5:]
    assert {(e["capability"], e["op"], e["request"]["path"]) for e in unstable} == {
        ("filesystem", "read_text", "out/d/f")
    }, unstable


# --- hugind's own files: renaming, removing, copying or linking a parent (#26) ------------

API_KEY = "sk-hugind-redteam-key"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """$HUGIND_HOME beside the agent roots, with a backend key and a saved session."""
    home = tmp_path / "hugind-home"
    (home / "sessions" / "s1").mkdir(parents=True)
    (home / "sessions" / "s1" / "state.json").write_text("other run's conversation")
    (home / "config.yaml").write_text(f"backends: {{a: {{url: 'http://127.0.0.1:1', api_key: {API_KEY}}}}}\n")
    monkeypatch.setenv("HUGIND_HOME", str(home))
    return home


@pytest.mark.parametrize("where", ["root", "under-write", "root-itself"])
def test_a_policy_whose_root_holds_hugind_home_is_refused_before_the_run(cli, agent_dir, tmp_path, where):
    """The #26 road (fs.rename(<home>, <root>/moved), then read the key) cannot start:
    the policy is refused, exit 2, naming the root and hugind's file."""
    root = agent_dir()
    home = {"root": root / "home", "under-write": root / "out" / "deep" / "home", "root-itself": root}[where]
    (home / "sessions").mkdir(parents=True, exist_ok=True)
    (home / "config.yaml").write_text(f"api_key: {API_KEY}\n")
    (root / "out").mkdir(exist_ok=True)
    body = "fs.rename('home', 'out/moved'); return fs.read_text('out/moved/config.yaml');"
    (root / "main.js").write_text(probe_source(body))
    write_manifest(root, {"filesystem": {"read": ["."], "write": ["out"]}})
    before = snapshot(tmp_path)
    res = cli("run", str(root), env={"HUGIND_HOME": str(home)})
    assert res.code == 2, (res.code, res.stdout, res.stderr)
    assert "hugind's own" in res.stderr and str(home / "config.yaml") in res.stderr
    assert "HUGIND_HOME" in res.stderr
    assert API_KEY not in res.stdout + res.stderr
    assert snapshot(tmp_path) == before


# Roads from a writable root to hugind's home beside it: a symlink in the root names it.
HOME_ATTACKS = [
    ("rename the home's parent through a link", "fs.rename('out/h/', 'out/moved')"),
    ("rename the config through a link", "fs.rename('out/h/config.yaml', 'out/stolen.yaml')"),
    ("rename the sessions dir", "fs.rename('out/h/sessions', 'out/s')"),
    ("remove the home", "fs.remove('out/h/', {recursive: true})"),
    ("copy the home into the root", "fs.copy('out/h/', 'out/copy')"),
    ("copy the config", "fs.copy('out/h/config.yaml', 'out/copy.yaml')"),
    ("rename onto the home", "fs.rename('out/mine.txt', 'out/h/config.yaml')"),
    ("make a dir in the sessions", "fs.mkdir('out/h/sessions/new')"),
    ("write the config", "fs.write_text('out/h/config.yaml', 'x')"),
]


@pytest.mark.parametrize(("name", "call"), HOME_ATTACKS, ids=[a[0] for a in HOME_ATTACKS])
def test_hugind_home_cannot_be_moved_removed_or_copied_into_a_root(attack, layout, home, tmp_path, name, call):
    root, _ = layout
    os.symlink(home, root / "out" / "h")
    before = snapshot(tmp_path)
    out = attack(f"return {call};", FS_POLICY, root=root)
    value = out.value
    assert isinstance(value, dict) and value.get("ok") is False, f"attack was NOT denied: {value!r}"
    assert value["name"] == "PermissionDenied", value
    denied = [e["rule"] for e in out.audit if e["decision"] == "deny"]
    assert denied and denied[-1] in ("filesystem.internal", "filesystem.outside-roots"), out.audit
    assert API_KEY not in json.dumps(value)
    assert snapshot(tmp_path) == before  # the home, its config and sessions untouched


def test_renaming_the_link_itself_moves_only_the_link(attack, layout, home, tmp_path):
    """fs.rename acts on the entry: the link moves, the home stays, and reading through
    the moved link is still outside the roots."""
    root, _ = layout
    os.symlink(home, root / "out" / "h")
    out = attack("fs.rename('out/h', 'out/moved'); return fs.read_text('out/moved/config.yaml');", FS_POLICY, root=root)
    assert_denied(out, "filesystem.outside-roots", "outside the readable roots")
    assert os.path.islink(root / "out" / "moved") and (home / "config.yaml").read_text().count(API_KEY) == 1
