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
    """Each configuration once per round, rounds interleaved, so drift in the machine's load
    falls on all of them alike."""
    policy = build_policy({"shell": {"allow": True, "whitelist": ["echo"]}}, runtime_fs_mode=None, agent_root=root)
    engine = PolicyEngine(policy)
    ctx = HostContext(policy=engine, agent_root=root)
    spawn = spawn_op()
    env = engine.shell_env()

    def peer() -> None:
        subprocess.run(["/bin/echo", "hi"], capture_output=True, env=env, cwd=root, start_new_session=True, check=True)

    def through_hugind() -> None:
        result = spawn(ctx, {"program": "echo", "args": ["hi"]})
        assert result["stdout"] == "hi\n", result

    def bare(argv: list[str], env: dict[str, str]) -> None:
        subprocess.run(argv, capture_output=True, env=env, cwd=root, check=True)

    configs: dict[str, tuple[str | None, object]] = {"unconfined Popen (peer)": (None, peer)}
    for label, choice in (("bubblewrap", None), ("launcher", "none")):
        _select(choice)
        caps = probe.capabilities()
        if label == "bubblewrap" and caps.bwrap is None:
            print(f"(bubblewrap unavailable: {caps.bwrap_problem})")
            continue
        launch = confined(plan_child(engine, ("/bin/echo", "hi"), str(root), env), caps)
        configs[f"hugind shell.spawn, {label}"] = (choice, through_hugind)
        configs[f"bare {label} + echo"] = (choice, lambda run=launch: bare(run.argv, run.env))
    samples: dict[str, list[float]] = {label: [] for label in configs}
    for _ in range(repeat + 1):  # the first round warms caches and is dropped
        for label, (choice, fn) in configs.items():
            _select(choice)
            samples[label] += time_call(fn, 1)  # type: ignore[arg-type]
    _select(None)
    engine.close()
    return {label: median_ms(times[1:]) for label, times in samples.items()}


def _select(choice: str | None) -> None:
    if choice is None:
        os.environ.pop(probe.BWRAP_ENV, None)
    else:
        os.environ[probe.BWRAP_ENV] = choice


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
