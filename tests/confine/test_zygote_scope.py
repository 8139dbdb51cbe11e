"""The zygote's kill requests reach one command's tree and nothing else, in both modes.

A worker's keeper kills with ``kill(-1)`` inside its own Landlock domain: were the
keeper outside one, that kill would reach every process of the sandbox (the other
commands, the zygote itself). So: two commands at once, one killed, the other
finishes with its output, and the zygote still takes commands."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

from hugind.confine.plan import plan_child
from tests.confine.test_zygote import _run, agent, zygote  # noqa: F401  # fixtures (both modes)


def test_killing_one_command_leaves_the_others_alone(agent, zygote, tmp_path: Path):  # noqa: F811
    root = str(tmp_path / "agent")
    results: list[tuple[int | None, str, str]] = []
    survivor = plan_child(agent, ("/bin/sh", "-c", "sleep 1.5; echo alive"), root, {})
    other = threading.Thread(target=lambda: results.append(_run(zygote, survivor)))
    other.start()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        victim = zygote.start(plan_child(agent, ("/bin/sh", "-c", "sleep 30 & sleep 30"), root, {}), out_w, err_w)
    finally:
        os.close(out_w)
        os.close(err_w)
    time.sleep(0.5)
    victim.signal("term")
    assert (victim.wait(10) and victim.code is None) or victim.code == 128 + 15
    assert os.read(out_r, 10) == b""  # the whole tree is gone: no writer left on its pipe
    os.close(out_r)
    os.close(err_r)
    other.join()
    assert results == [(0, "alive\n", "")]
    assert _run(zygote, plan_child(agent, ("/bin/echo", "next"), root, {})) == (0, "next\n", "")
