"""hugind/confine/limits.py: the SPEC it is given, the limits it sets, and how it fails.

``spec_words`` runs in this process, ``set_rlimits`` in a fork of it (a lowered hard limit
cannot be raised back).
``main`` execs or exits: it runs as the script, in a child, the way bubblewrap runs it.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from hugind.confine import limits
from hugind.confine.command import LIMITS


def test_spec_words_are_limits_then_dropped_variables_in_order():
    assert limits.spec_words({"nproc": 64, "fsize": 1024}, ["LC_CTYPE", "X"]) == [
        "nproc=64",
        "fsize=1024",
        "-LC_CTYPE",
        "-X",
    ]
    assert limits.spec_words({}, []) == []


def test_the_table_names_each_rlimit_once():
    # Each row: the resource, dash's ulimit option for it and the unit that option counts in
    # (a sandbox per command sets the limits with the view's sh: shell_limits.py).
    assert limits.RLIMITS == {
        "nproc": (resource.RLIMIT_NPROC, "p", 1),
        "fsize": (resource.RLIMIT_FSIZE, "f", 512),
        "cpu": (resource.RLIMIT_CPU, "t", 1),
        "data": (resource.RLIMIT_DATA, "d", 1024),
        "nofile": (resource.RLIMIT_NOFILE, "n", 1),
        "core": (resource.RLIMIT_CORE, "c", 512),
    }


def _in_fork(work) -> str:
    """``work()``'s text result from a forked copy of this process: lowering a hard limit
    cannot be undone without CAP_SYS_RESOURCE, so pytest's own limits are never touched.
    (A mutation tester maps tests to the functions they call in-process: each test below
    also calls ``set_rlimits({})``, which sets nothing, in this process.)"""
    limits.set_rlimits({})
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            text = str(work())
        except BaseException as exc:
            text = f"error: {exc!r}"
        os.write(write, text.encode())
        os._exit(0)
    os.close(write)
    out = b""
    while chunk := os.read(read, 4096):
        out += chunk
    os.close(read)
    os.waitpid(pid, 0)
    return out.decode()


def test_set_rlimits_sets_soft_and_hard_capped_by_the_hard_limit_in_force():
    def work():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 4096))
        limits.set_rlimits({"core": 1 << 20})  # above the hard limit: capped to it
        capped = resource.getrlimit(resource.RLIMIT_CORE)
        limits.set_rlimits({"core": 1024, "nofile": 64})
        return (capped, resource.getrlimit(resource.RLIMIT_CORE), resource.getrlimit(resource.RLIMIT_NOFILE))

    assert _in_fork(work) == str(((4096, 4096), (1024, 1024), (64, 64)))


def test_set_rlimits_under_an_unlimited_hard_limit_sets_the_value():
    def work():
        if resource.getrlimit(resource.RLIMIT_CORE)[1] != resource.RLIM_INFINITY:
            return "skip: the core hard limit is finite here"
        limits.set_rlimits({"core": 2048})
        return resource.getrlimit(resource.RLIMIT_CORE)

    result = _in_fork(work)
    if result.startswith("skip: "):
        pytest.skip(result)
    assert result == str((2048, 2048))


def _script(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-I", "-S", str(LIMITS), *args], capture_output=True, text=True, timeout=30)


def test_the_script_sets_limits_drops_variables_and_execs():
    probe = "import os, resource; print(resource.getrlimit(resource.RLIMIT_NOFILE), os.environ.get('DROPME'))"
    env = {**os.environ, "DROPME": "x", "KEEPME": "y"}
    out = subprocess.run(
        [sys.executable, "-I", "-S", str(LIMITS), "nofile=64", "-DROPME", "--", sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
    )
    assert (out.returncode, out.stdout, out.stderr) == (0, "(64, 64) None\n", "")


@pytest.mark.parametrize(
    ("args", "stderr"),
    [
        (["nofile=64"], "hugind-confine: limits: '--' is not in list\n"),
        (["nofile=64", "--"], "hugind-confine: limits: no program\n"),
        (
            ["nofile=lots", "--", "/bin/true"],
            "hugind-confine: limits: invalid literal for int() with base 10: 'lots'\n",
        ),
        (["bogus=1", "--", "/bin/true"], "hugind-confine: limits: 'bogus'\n"),
        (["--", "/no/such/program"], "hugind-confine: limits: No such file or directory\n"),
    ],
    ids=["no-separator", "no-program", "bad-number", "unknown-limit", "missing-program"],
)
def test_the_script_fails_in_one_line_with_126_before_the_program(args, stderr):
    out = _script(*args)
    assert (out.returncode, out.stdout, out.stderr.rstrip("\n")) == (limits.EXIT_LAUNCH_FAILED, "", stderr.rstrip("\n"))
    assert out.stderr.endswith("\n") and out.stderr.count("\n") == 1
    assert limits.EXIT_LAUNCH_FAILED == 126
