"""The cost of confining a child, per `run_command`.

Median of N `echo` runs (default 50), all in one run of this script:
  * peer: the unconfined spawn hugind did before confinement (Popen, pipes,
    the same environment and working directory);
  * `shell.spawn echo` through hugind's real capability (policy check,
    confinement plan, output collection) with bubblewrap;
  * the same with the launcher (no bubblewrap: user/PID/net/mount
    namespaces + Landlock);
  * bare `bwrap ... echo` and launcher runs without hugind around them,
    to show how much of the cost is the kernel's namespace setup;
  * and as runs are: `run_command("true")` from a JS agent through the run's
    zygote (`Promise.all` in batches of 8), with bubblewrap and with the
    launcher, against as many `subprocess.run(["true"])` from plain Python
    (best of 3 each, taken in turns): the issue's ratio (target <= 1.3x).

Usage: python bench/confine.py [--repeat N] [--commands N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
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


MANIFEST = """\
name: bench-confine
entry_point: main.js
mode: script
runtime_fs_mode: read-only
permissions:
  filesystem:
    read: [.]
  shell:
    allow: true
    whitelist: ["true"]
    timeout: 30
  limits:
    timeout: 600
"""

COMMANDS_JS = """\
export default async (input) => {
  const n = Number(input.args[0]);
  await run_command("true");
  const t0 = performance.now();
  for (let done = 0; done < n; done += 8) {
    const batch = [];
    for (let k = 0; k < 8 && done + k < n; k++) batch.push(run_command("true"));
    await Promise.all(batch);
  }
  return (performance.now() - t0) / 1000;
};
"""


def run_commands(n: int, root: Path, rounds: int = 3) -> dict[str, tuple[float, float]]:
    """(hugind, Python) seconds for ``n`` commands, best of ``rounds`` taken in turns, per mode."""
    from hugind.manifest import load_agent
    from hugind.run import RunOptions, run_agent

    root.mkdir()
    (root / "agent.yaml").write_text(MANIFEST)
    (root / "main.js").write_text(COMMANDS_JS)
    agent = load_agent(root)

    def hugind() -> float:
        result = run_agent(agent, RunOptions(args=[str(n)], stdout=lambda b: None, stderr=lambda b: None, host_env={}))
        assert result.has_result, "the bench agent gave no result"
        return float(result.value)  # type: ignore[arg-type]

    def python() -> float:
        start = time.perf_counter()
        for _ in range(n):
            subprocess.run(["true"], check=True)
        return time.perf_counter() - start

    out = {}
    for label, choice in (("bubblewrap", None), ("launcher", "none")):
        _select(choice)
        if label == "bubblewrap" and probe.capabilities().bwrap is None:
            continue
        hugind()  # the run's zygote and workers start here once: a warm-up, as in host_calls
        runs = [(hugind(), python()) for _ in range(rounds)]
        out[label] = (min(h for h, _ in runs), min(p for _, p in runs))
    _select(None)
    return out


def _select(choice: str | None) -> None:
    if choice is None:
        os.environ.pop(probe.BWRAP_ENV, None)
    else:
        os.environ[probe.BWRAP_ENV] = choice


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--commands", type=int, default=400, help="run_command calls per round (0: skip)")
    ns = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = measure(ns.repeat, Path(tmp))
        commands = run_commands(ns.commands, Path(tmp) / "commands") if ns.commands else {}
    peer = results["unconfined Popen (peer)"]
    print(f"a sandbox per command: median of {ns.repeat} `echo hi` runs")
    for label, ms in results.items():
        print(f"  {label:34s} {ms:8.2f} ms   {ms / peer:6.2f}x the unconfined peer")
    if commands:
        print(f"as runs are: {ns.commands} run_command('true') through the run's zygote, best of 3")
    for label, (h, p) in commands.items():
        per = 1000 / ns.commands
        print(f"  zygote, {label:12s} hugind {h * per:6.2f} ms/cmd, python {p * per:6.2f} ms/cmd, ratio {h / p:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
