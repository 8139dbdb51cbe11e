"""``--ray`` on the command line, without a cluster: the missing-Ray error and the optional address."""

from __future__ import annotations

import subprocess
import sys

import pytest

from hugind.distributed.option import fill_bare_ray
from tests.conftest import REPO
from tests.team.helpers import task, write_workflow
from tests.team.test_runner import ECHO

# Runs the real CLI in a process where `import ray` fails, as without the extra.
NO_RAY = (
    "import sys; sys.modules['ray'] = None; from hugind.entry import main_here as main; sys.argv[0] = 'hugind'; main()"
)


def test_without_ray_installed_ray_is_a_one_line_usage_error(tmp_path):
    workflow = write_workflow(tmp_path, {"a": ECHO}, [task("t", "a")])
    state = tmp_path / "state"
    for extra in (["--ray"], ["--ray", "127.0.0.1:6379"], ["--ray=auto"]):
        res = subprocess.run(
            [sys.executable, "-c", NO_RAY, "team", str(workflow), "--state-dir", str(state), *extra],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert (res.returncode, res.stderr) == (2, "hugind: error: --ray needs Ray: pip install 'hugind[ray]'\n")
        assert res.stdout == ""
    assert not state.exists()  # nothing ran, nothing was written


@pytest.mark.parametrize(
    ("given", "meant"),
    [
        (["wf.yaml", "--ray"], ["wf.yaml", "--ray=local"]),
        (["wf.yaml", "--ray", "--fresh"], ["wf.yaml", "--ray=local", "--fresh"]),
        (["--ray", "wf.yaml"], ["--ray=local", "wf.yaml"]),
        (["wf.yaml", "--ray", "auto"], ["wf.yaml", "--ray", "auto"]),
        (["wf.yaml", "--ray", "10.0.0.5:6379"], ["wf.yaml", "--ray", "10.0.0.5:6379"]),
        (["wf.yaml", "--ray", "head.internal:6379"], ["wf.yaml", "--ray", "head.internal:6379"]),
        (["wf.yaml", "--ray", "ray://head:10001"], ["wf.yaml", "--ray", "ray://head:10001"]),
        (["wf.yaml", "--ray=x:1"], ["wf.yaml", "--ray=x:1"]),
        (["--", "--ray"], ["--", "--ray"]),
    ],
)
def test_a_bare_ray_flag_gets_the_default_address(given, meant):
    assert fill_bare_ray(given) == meant


def test_an_address_nobody_listens_on_is_a_one_line_usage_error(tmp_path, cli):
    pytest.importorskip("ray", reason="needs the 'ray' extra")
    import socket

    with socket.socket() as probe:  # a port that was free a moment ago and is closed now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    workflow = write_workflow(tmp_path, {"a": ECHO}, [task("t", "a")])
    res = cli("team", str(workflow), "--state-dir", str(tmp_path / "state"), "--ray", f"127.0.0.1:{port}")
    assert res.code == 2, res.stderr
    assert res.stderr.endswith(
        f"hugind: error: --ray: cannot reach a Ray cluster at 127.0.0.1:{port}: Connection refused\n"
    )
    assert res.stderr.count("\n") == 1
    assert not (tmp_path / "state").exists()  # refused before the run wrote any state
