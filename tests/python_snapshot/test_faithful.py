"""What each run of the snapshot must own: its seeds, its environment, its files."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hugind.sandbox import py_snapshot


@pytest.fixture(scope="session")
def random_snap(runtime_wasm: bytes) -> py_snapshot.PySnapshot:
    """A snapshot that preloads ``random``, whose generator is seeded at import."""
    return py_snapshot.load(runtime_wasm, preload=(*py_snapshot.DEFAULT_PRELOAD, "random"))


def test_random_is_reseeded_per_run(runner, random_snap) -> None:
    code = "import sys; print('random' in sys.modules); import random; print(random.random())"
    first = runner.run("snapshot", code, snap=random_snap)
    second = runner.run("snapshot", code, snap=random_snap)
    assert first.stdout.startswith("True\n") and second.stdout.startswith("True\n")
    assert first.stdout != second.stdout


def test_urandom_differs_per_run(runner) -> None:
    code = "import os; print(os.urandom(16).hex())"
    assert runner.run("snapshot", code).stdout != runner.run("snapshot", code).stdout


def test_hash_secret_is_the_snapshots(runner, random_snap) -> None:
    """Documented: one secret per snapshot build (drawn when it is made), not per run."""
    code = "print(hash('hugind'))"
    one = runner.run("snapshot", code).stdout
    assert runner.run("snapshot", code).stdout == one
    assert runner.run("snapshot", code, snap=random_snap).stdout != one
    assert runner.run("plain", code).stdout != runner.run("plain", code).stdout


def test_clock_is_the_runs(runner) -> None:
    before = time.time()
    seen = float(runner.run("snapshot", "import time; print(time.time())").stdout)
    assert before - 1 <= seen <= time.time() + 1


def test_nothing_carries_over_between_runs(runner, tmp_path: Path) -> None:
    first = runner.run(
        "snapshot",
        "import os, json, sys; os.environ['LEFT'] = '1'; json.LEFT = 1; sys.path.append('/left'); LEFT = 1",
        env=[("ONLY_FIRST", "1")],
    )
    assert first.status is None
    second = runner.run(
        "snapshot",
        "import os, json, sys\n"
        "print(sorted(os.environ), hasattr(json, 'LEFT'), '/left' in sys.path, 'LEFT' in globals())",
    )
    assert second.stdout == "[] False False False\n"


def test_preopens_are_the_runs_only(runner, tmp_path: Path) -> None:
    """Directories are given only at run time, under names the snapshot never saw;
    the placeholders of the set-up lead nowhere."""
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    (a / "f.txt").write_text("in a")
    (b / "g.txt").write_text("in b")
    code = (
        "print(open('/first/f.txt').read(), open('/second/g.txt').read())\n"
        "for p in ('/first/g.txt', '/elsewhere'):\n"
        "    try:\n        open(p)\n    except OSError as e:\n        print(type(e).__name__)"
    )
    out = runner.run("snapshot", code, preopens=[(a, "/first"), (b, "/second")])
    assert out.stdout == "in a in b\nFileNotFoundError\nFileNotFoundError\n", out.stderr
    # The same directories under other names, in the other order, in the next run.
    swapped = runner.run("snapshot", "print(open('/x/g.txt').read())", preopens=[(b, "/x"), (a, "/y/z")])
    assert swapped.stdout == "in b\n", swapped.stderr
    assert runner.run("snapshot", "print(open('/y/z/f.txt').read())", preopens=[(b, "/x"), (a, "/y/z")]).stdout == (
        "in a\n"
    )


def test_relative_paths_and_cwd_import(runner, tmp_path: Path) -> None:
    """A preopen at "/" and an import through sys.path[0] == '' (the cwd), as -c gives."""
    (tmp_path / "localmod.py").write_text("NAME = 'local'\n")
    out = runner.run("snapshot", "import localmod; print(localmod.NAME)", preopens=[(tmp_path, "/")])
    plain = runner.run("plain", "import localmod; print(localmod.NAME)", preopens=[(tmp_path, "/")])
    assert out == plain
    assert out.stdout == "local\n"


@pytest.mark.parametrize("guest", [".", "./work", "//work", "/deep/er/dir"])
def test_preopen_names_as_wasi_libc_keeps_them(runner, tmp_path: Path, guest: str) -> None:
    (tmp_path / "f.txt").write_text("found")
    rel = guest.lstrip("./")
    path = f"{rel}/f.txt" if rel else "f.txt"
    code = f"print(open({path!r}).read()); print(open('/' + {path!r}).read() if {bool(rel)} else '')"
    plain = runner.run("plain", code, preopens=[(tmp_path, guest)])
    assert runner.run("snapshot", code, preopens=[(tmp_path, guest)]) == plain
    assert plain.stdout.startswith("found\n")
