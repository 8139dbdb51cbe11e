"""The same programs through plain ``_start`` and through the snapshot: the same
exit status, stdout, stderr and files left in the preopened directories."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

PROGRAMS = {
    "empty": "pass",
    "print": 'print("hello"); import sys; print("to stderr", file=sys.stderr)',
    "no_newline": 'import sys; sys.stdout.write("partial"); sys.stderr.write("e")',
    "unicode": 'print("h\\u00e9llo \\u2713")',
    "exit_3": "import sys; sys.exit(3)",
    "exit_0": "import sys; sys.exit(0)",
    "exit_none": "raise SystemExit",
    "exit_text": 'import sys; sys.exit("bye now")',
    "exception": 'raise ValueError("bad value")',
    "chained": "try:\n    1 / 0\nexcept Exception as e:\n    raise KeyError('k') from e",
    "syntax_error": "def f(:\n    pass",
    "nested_tb": "def f():\n    g()\ndef g():\n    raise RuntimeError('deep')\nf()",
    "argv": "import sys; print(sys.argv, sys.orig_argv[:2], sys.orig_argv[3:])",
    "environ": "import os; print(sorted(os.environ.items())); print(os.getenv('GREETING'))",
    "stdlib": "import json, asyncio, re\nprint(json.dumps({'a': [1, 2]}), re.sub('a', 'b', 'aa'))\n"
    "async def main():\n    await asyncio.sleep(0)\n    return 'ok'\nc = main()\ntry:\n    c.send(None)\n"
    "except StopIteration as stop:\n    print(stop.value)",
    # warnings is imported here because the snapshot preloads it (asyncio does): the C
    # warnings machinery formats through it when it is loaded (py_snapshot.py's docstring).
    "unawaited": "import warnings\nasync def f():\n    pass\nc = f()\nprint('made')",
    "kept_by_exception": "class A:\n    def __del__(self):\n        print('released')\n"
    "def f():\n    a = A()\n    raise ValueError('x')\nf()",
    "atexit": "import atexit; atexit.register(print, 'at exit'); print('body')",
    "finalizer": "class A:\n    def __del__(self):\n        print('finalized')\na = A()\nprint('made')",
    "replaced_main": "import sys, types\nclass A:\n    def __del__(self):\n        print('finalized')\n"
    "m = types.ModuleType('__main__'); m.a = A(); sys.modules['__main__'] = m; del m\nprint('replaced')",
    "main_module": "print(__name__, sorted(globals()), __doc__, __spec__, __package__)",
    "sys_state": "import sys; print(sys.path, sys.flags, sys.executable, sys.prefix, sys.getrecursionlimit())",
    "cwd": "import os; print(os.getcwd())",
    "read_preopen": "print(open('/data/hello.txt').read())",
    "list_preopen": "import os; print(sorted(os.listdir('/data')))",
    "import_preopen": "import sys; sys.path.insert(0, '/data'); import helper; print(helper.VALUE)",
    "write_preopen": "with open('/out/made.txt', 'w') as f:\n    f.write('written')\nprint('done')",
    "unclosed_write": "f = open('/out/left_open.txt', 'w'); f.write('flushed at exit')",
    "missing_file": "open('/data/nope.txt')",
    "outside_preopen": "open('/etc/passwd')",
    "stdin_eof": "import sys; print(repr(sys.stdin.read()))",
    # The set-up's C frames stay on the shadow stack below the runs': deep recursion
    # (Python's and the C code's own limits) must end the same way.
    "python_recursion": "def f(n):\n    return f(n + 1)\ntry:\n    f(0)\nexcept RecursionError as e:\n    print(e)",
    "c_recursion_json": "import json\nx = []\nfor i in range(100000):\n    x = [x]\n"
    "try:\n    json.dumps(x)\nexcept RecursionError as e:\n    print(e)",
    "c_recursion_repr": "x = []\nfor i in range(100000):\n    x = [x]\n"
    "try:\n    repr(x)\nexcept RecursionError as e:\n    print(e)",
    "parser_depth": "try:\n    eval('(' * 2000 + ')' * 2000)\nexcept MemoryError as e:\n    print(e)",
    "exit_in_atexit": "import atexit, sys; atexit.register(print, 'cleanup'); sys.exit(4)",
}


def _dirs(tmp: Path, way: str) -> tuple[Path, Path]:
    data, out = tmp / way / "data", tmp / way / "out"
    data.mkdir(parents=True)
    out.mkdir()
    (data / "hello.txt").write_text("hi there")
    (data / "helper.py").write_text("VALUE = 6 * 7\n")
    for path in data.iterdir():  # the .pyc written beside helper.py records its mtime
        os.utime(path, (1_700_000_000, 1_700_000_000))
    return data, out


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_same_outcome(runner, tmp_path: Path, name: str) -> None:
    code = PROGRAMS[name]
    outcomes, files = {}, {}
    for way in ("plain", "snapshot"):
        data, out = _dirs(tmp_path, way)
        outcomes[way] = runner.run(
            way,
            code,
            args=["one", "two words"],
            env=[("GREETING", "hello"), ("LANG", "C.UTF-8")],
            preopens=[(data, "/data"), (out, "/out")],
        )
        files[way] = (_files(data), _files(out))
        shutil.rmtree(tmp_path / way)
    assert outcomes["snapshot"] == outcomes["plain"]
    assert files["snapshot"] == files["plain"]


def test_the_programs_do_what_they_say(runner, tmp_path: Path) -> None:
    """The differential test compares real behaviour, not two empty outputs."""
    data, out = _dirs(tmp_path, "check")
    pre = [(data, "/data"), (out, "/out")]
    assert runner.run("snapshot", PROGRAMS["exit_3"]).status == 3
    assert runner.run("snapshot", PROGRAMS["exit_0"]).status == 0
    assert runner.run("snapshot", PROGRAMS["empty"]).status is None
    failed = runner.run("snapshot", PROGRAMS["exception"])
    assert failed.status == 1
    assert failed.stderr.endswith('File "<string>", line 1, in <module>\nValueError: bad value\n')
    assert runner.run("snapshot", PROGRAMS["read_preopen"], preopens=pre).stdout == "hi there\n"
    assert runner.run("snapshot", PROGRAMS["import_preopen"], preopens=pre).stdout == "42\n"
    assert runner.run("snapshot", PROGRAMS["argv"], args=["x"]).stdout.startswith("['-c', 'x'] ['python', '-S']")
    env = runner.run("snapshot", PROGRAMS["environ"], env=[("GREETING", "hey")])
    assert env.stdout == "[('GREETING', 'hey')]\nhey\n"
    runner.run("snapshot", PROGRAMS["unclosed_write"], preopens=pre)
    assert (out / "left_open.txt").read_text() == "flushed at exit"
    assert runner.run("snapshot", PROGRAMS["finalizer"]).stdout == "made\nfinalized\n"
    assert runner.run("snapshot", PROGRAMS["replaced_main"]).stdout == "replaced\nfinalized\n"
    assert (
        "sys:1: RuntimeWarning: coroutine 'f' was never awaited" in runner.run("snapshot", PROGRAMS["unawaited"]).stderr
    )
    assert runner.run("snapshot", PROGRAMS["kept_by_exception"]).stdout == "released\n"
    # Not in PROGRAMS: the plain run also reports the failed flush as "Exception
    # ignored in: <__main__.W object at 0x...>", whose address differs.
    flush_fails = (
        "import sys, io\nclass W(io.StringIO):\n    def flush(self):\n        raise OSError('no')\nsys.stdout = W()"
    )
    assert runner.run("plain", flush_fails).status == runner.run("snapshot", flush_fails).status == 120


def test_stdin_is_the_runs(runner) -> None:
    """The set-up made sys.stdin on an empty fd 0; a run reads its own."""
    code = "import sys\nfor line in sys.stdin:\n    print(line.strip().upper())\nprint(repr(sys.stdin.read()))"
    data = "first line\nsecond \u00e9\n".encode()
    plain = runner.run("plain", code, stdin=data)
    assert runner.run("snapshot", code, stdin=data) == plain
    assert plain.stdout == "FIRST LINE\nSECOND \u00c9\n''\n"
