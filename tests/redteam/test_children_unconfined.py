"""The per-command timeout and cleanup hold without namespaces too (issue #26 item 3).

With neither bubblewrap nor user namespaces (``HUGIND_CONFINE_DISABLE``, no --strict)
a child has no PID namespace to die with: what it leaves behind is killed through its
pids cgroup (``cgroup.kill`` on v2, the cgroup's own process list on v1)."""

from __future__ import annotations

import time

import pytest

from hugind.confine.probe import capabilities
from tests.redteam.helpers import js
from tests.support.processes import marker, wait_gone


def test_leftovers_die_without_namespaces(attack, monkeypatch):
    monkeypatch.setenv("HUGIND_CONFINE_DISABLE", "bwrap,namespaces")
    if capabilities().pids_cgroup is None:
        pytest.skip("no pids cgroup here: without namespaces nothing holds a child's leftovers")
    mark = marker()
    body = (
        f"const r = await run_command({js(f'setsid sleep {mark} & echo done')}, "
        "{detailed: true});\nreturn [r.stdout, r.timed_out];"
    )
    started = time.monotonic()
    out = attack(body, {"shell": {"allow": True, "timeout": 2}})
    assert out.value["value"] == ["done\n", False], out.value
    assert time.monotonic() - started < 15
    assert wait_gone(mark, within=1) == []
