"""The cost of confining a child, per `run_command`.

Median of N `echo` runs (default 50), all in one run of this script:
  * peer: the unconfined spawn hugind did before confinement (Popen, pipes,
    the same environment and working directory);
  * `shell.spawn echo` through hugind's real capability (policy check,
    confinement plan, output collection) with bubblewrap;
  * the same with the launcher (no bubblewrap: user/PID/net/mount
    namespaces + Landlock);
  * bare `bwrap ... echo` and launcher runs without hugind around them,
    to show how much of the cost is the kernel's namespace setup.

Usage: python bench/confine.py [--repeat N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))
from _timing import median_ms, time_call

from hugind.confine import probe
from hugind.confine.command import confined
from hugind.confine.plan import plan_child
from hugind.host.registry import HostContext
from hugind.host.shell import OPS
from hugind.policy import PolicyEngine, build_policy


def spawn_op():
    return next(op for op in OPS if op.name == "shell.spawn").handler


def measure(repeat: int, root: Path) -> dict[str, float]:
    policy = build_policy({"shell": {"allow": True, "whitelist": ["echo"]}}, runtime_fs_mode=None, agent_root=root)
    engine = PolicyEngine(policy)
    ctx = HostContext(policy=engine, agent_root=root)
    spawn = spawn_op()
    env = engine.shell_env()
    out: dict[str, float] = {}

    def peer() -> None:
        subprocess.run(["/bin/echo", "hi"], capture_output=True, env=env, cwd=root, start_new_session=True, check=True)

    def through_hugind() -> None:
        result = spawn(ctx, {"program": "echo", "args": ["hi"]})
        assert result["stdout"] == "hi\n", result

    def bare(argv: list[str], env: dict[str, str]) -> None:
        subprocess.run(argv, capture_output=True, env=env, cwd=root, check=True)

    peer()
    out["unconfined Popen (peer)"] = median_ms(time_call(peer, repeat))
    for label, choice in (("bubblewrap", None), ("launcher", "none")):
        if choice is None:
            os.environ.pop(probe.BWRAP_ENV, None)
        else:
            os.environ[probe.BWRAP_ENV] = choice
        caps = probe.capabilities()
        if label == "bubblewrap" and caps.bwrap is None:
            print(f"(bubblewrap unavailable: {caps.bwrap_problem})")
            continue
        through_hugind()
        out[f"hugind shell.spawn, {label}"] = median_ms(time_call(through_hugind, repeat))
        launch = confined(plan_child(engine, ("/bin/echo", "hi"), str(root), env), caps)
        out[f"bare {label} + echo"] = median_ms(time_call(lambda run=launch: bare(run.argv, run.env), repeat))
    os.environ.pop(probe.BWRAP_ENV, None)
    engine.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=50)
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = measure(ns.repeat, Path(tmp))
    peer = results["unconfined Popen (peer)"]
    print(f"median of {ns.repeat} `echo hi` runs")
    for label, ms in results.items():
        print(f"  {label:34s} {ms:8.2f} ms   {ms / peer:6.2f}x the unconfined peer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
