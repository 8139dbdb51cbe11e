"""Mutation score of hugind's deciding code, with mutmut (not in CI).

Each target is one module and the tests that cover it. For every target the
script copies the tracked tree into its own work dir (mutmut writes its
``mutants/`` copy there, never into the checkout), configures mutmut to mutate
only that module and to run only those tests, runs it, and prints the count of
each outcome and the score: killed / (killed + survived + no tests). A mutant
"killed" by a timeout counts as killed; "suspicious" and "skipped" are shown
apart. The survivors are listed by name; ``mutmut show NAME`` inside the
target's work dir prints the diff.

    python bench/mutation.py --list
    nice -n 19 python bench/mutation.py policy.net pinning --jobs 2
    nice -n 19 python bench/mutation.py --all --jobs 2 --minutes 60 --workdir /var/tmp/hugind-mutation

mutmut must be importable by the running Python (``pip install -e '.[bench]'``).
A target's work dir is kept, so a second run re-tests only what changed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Target:
    name: str
    module: str  # path of the mutated module, relative to the repo
    tests: tuple[str, ...]  # pytest selections that cover it (in-process: see README)
    # Tests that measure wall-clock time: a mutant's run under mutmut's trampolines and
    # ``nice`` is slower, and a clean run that fails stops the whole target.
    exclude: tuple[str, ...] = ()
    # More [tool.mutmut] settings, e.g. the timeouts of a target whose tests start slowly.
    settings: tuple[tuple[str, str | float], ...] = ()


_POLICY = "tests/policy"
_SHELL_TESTS = (
    "tests/policy/test_policy_shell.py",
    "tests/policy/test_shell_edges.py",
    "tests/policy/test_shell_parse_edges.py",
    "tests/policy/test_shell_lookups_fresh.py",
    "tests/policy/test_exec_options.py",
    "tests/fuzz/test_prop_shell.py",
)
_PROXY_TESTS = (
    "tests/confine/test_proxy.py",
    "tests/confine/test_proxy_decide.py",
    "tests/confine/test_proxy_decide_edges.py",
    "tests/confine/test_proxy_h11.py",
    "tests/confine/test_proxy_parse_edges.py",
    "tests/confine/test_forwarder.py",
)
_TIMED = ("test_pathological_nesting_is_refused_not_crashed", "test_slow_drip_times_out")
TARGETS: tuple[Target, ...] = (
    Target(
        "policy.net",
        "hugind/policy/net.py",
        (
            "tests/policy/test_policy_net.py",
            "tests/policy/test_net_host_parsing.py",
            "tests/redteam/test_net_decisions.py",
            "tests/fuzz/test_prop_net.py",
        ),
        _TIMED,
    ),
    Target("policy.shell", "hugind/policy/shell.py", _SHELL_TESTS, _TIMED),
    Target("policy.shell_parse", "hugind/policy/shell_parse.py", _SHELL_TESTS, _TIMED),
    Target("policy.exec_options", "hugind/policy/exec_options.py", _SHELL_TESTS, _TIMED),
    Target(
        "policy.plain_command",
        "hugind/policy/plain_command.py",
        (*_SHELL_TESTS, "tests/confine/test_plain_command.py"),
        _TIMED,
    ),
    Target(
        "policy.fs",
        "hugind/policy/fs.py",
        (
            "tests/policy/test_policy_fs.py",
            "tests/policy/test_fs_held.py",
            "tests/policy/test_fs_edges.py",
            "tests/policy/test_boundary.py",
            "tests/parity/test_parity.py",
            "tests/fuzz/test_prop_paths.py",
            "tests/fuzz/test_prop_realpath.py",
            "tests/fuzz/test_prop_within.py",
        ),
    ),
    Target(
        "policy.parse",
        "hugind/policy/parse.py",
        (
            "tests/policy/test_policy_parse.py",
            "tests/policy/test_parse_edges.py",
            "tests/policy/test_parse_mutants.py",
            "tests/fuzz/test_manifest_props.py",
        ),
    ),
    Target("policy.engine", "hugind/policy/engine.py", (_POLICY,), _TIMED),
    # The audit log and the description: only the files that assert what they write (the
    # rest of tests/policy calls them too, so each mutant would run hundreds of tests).
    Target(
        "policy.audit",
        "hugind/policy/audit.py",
        (
            "tests/policy/test_policy_audit.py",
            "tests/policy/test_audit_mutants.py",
            "tests/policy/test_engine_edges.py",
        ),
    ),
    Target(
        "policy.describe",
        "hugind/policy/describe.py",
        ("tests/policy/test_policy_parse.py", "tests/policy/test_describe_mutants.py"),
    ),
    Target("policy.model", "hugind/policy/model.py", (_POLICY,), _TIMED),
    Target("policy.host_rules", "hugind/policy/host_rules.py", (_POLICY,), _TIMED),
    Target(
        "policy.resolver",
        "hugind/policy/resolver.py",
        (
            "tests/policy/test_policy_net.py",
            "tests/policy/test_resolver_edges.py",
            "tests/policy/test_resolver_mutants.py",
            "tests/redteam/test_net_decisions.py",
        ),
        _TIMED,
    ),
    Target(
        "policy.boundary",
        "hugind/policy/boundary.py",
        (
            "tests/policy/test_boundary.py",
            "tests/policy/test_boundary_edges.py",
            "tests/policy/test_policy_fs.py",
            "tests/policy/test_fs_held.py",
            "tests/confine/test_plan.py",
            "tests/parity/test_parity.py",
        ),
    ),
    Target(
        "confine.plan",
        "hugind/confine/plan.py",
        (
            "tests/confine/test_plan.py",
            "tests/confine/test_plan_edges.py",
            "tests/confine/test_real_path.py",
            "tests/confine/test_zygote_scope.py",
            "tests/confine/test_layers_alone.py",
            "tests/parity/test_parity.py",
        ),
    ),
    # Only in-process tests: the launcher and the zygote load landlock.py (and mounts.py,
    # limits.py) as siblings under ``python -I -S``, where mutmut's trampolines (imported by
    # every mutated module) cannot be imported; a test that starts one would fail clean.
    Target(
        "confine.landlock",
        "hugind/confine/landlock.py",
        ("tests/confine/test_plan.py", "tests/confine/test_landlock_edges.py"),
    ),
    Target(
        "confine.mounts",
        "hugind/confine/mounts.py",
        ("tests/confine/test_mounts_edges.py",),
    ),
    Target(
        "confine.limits",
        "hugind/confine/limits.py",
        ("tests/confine/test_plan.py", "tests/confine/test_limits_edges.py"),
        # These run limits.py as the script, under ``-I -S``: see confine.landlock above.
        ("test_the_script_sets_limits_drops_variables_and_execs", "test_the_script_fails_in_one_line"),
    ),
    Target(
        "confine.seccomp_rules",
        "hugind/confine/seccomp_rules.py",
        ("tests/confine/test_seccomp_rules_edges.py", "tests/confine/test_strict_layers.py"),
    ),
    Target(
        "confine.seccomp",
        "hugind/confine/seccomp.py",
        ("tests/confine/test_seccomp_rules_edges.py", "tests/confine/test_strict_layers.py"),
    ),
    Target("confine.proxy.decide", "hugind/confine/proxy/decide.py", _PROXY_TESTS),
    Target("confine.proxy.parse", "hugind/confine/proxy/parse.py", _PROXY_TESTS),
    Target(
        "confine.gate",
        "hugind/confine/gate.py",
        ("tests/confine/test_gate.py", "tests/confine/test_gate_edges.py"),
    ),
    Target(
        "sandbox.recycle",
        "hugind/sandbox/recycle.py",
        (
            "tests/runtime/test_recycle.py",
            "tests/runtime/test_recycle_mutants.py",
            "tests/runtime/test_relay_bound.py",
        ),
        # Each mutant forked from a fork server that never ran a guest: forked from mutmut's main
        # process (which ran the clean tests), a worker hangs at the guest's first WASI write,
        # waiting on wasmtime-wasi's runtime threads that fork left behind, and was counted a
        # "timeout". A mutant's wall-clock limit is (its tests' time + timeout_constant) x
        # timeout_multiplier: 16 s by default, less than a loaded machine may take to start one.
        settings=(("process_isolation", "forkserver"), ("timeout_constant", 20.0), ("timeout_multiplier", 4.0)),
    ),
    # test_artifact_integrity.py pins through the CLI, in subprocesses mutmut cannot attribute.
    Target("pinning", "hugind/pinning.py", ("tests/runtime/test_pinning.py", "tests/runtime/test_pinning_kinds.py")),
)

# Not tracked by git but needed by the tests: the built JS engine (no target's tests use npm).
_UNTRACKED = ("hugind/_engine",)
# mutmut re-selects each test by node id, and pytest splits a node id at "::", also inside
# a parameter (test_x[http://[::1]/]): such ids are made selectable, the same in every run.
_IDS_PLUGIN = "hugind_mutation_ids"
_IDS_PLUGIN_TEXT = '''"""Written by bench/mutation.py: parameter ids without "::" or spaces."""


def pytest_make_parametrize_id(config, val, argname):
    if isinstance(val, str) and ("::" in val or " " in val or "\\\\" in val):
        return val.replace("::", ":_:").replace(" ", "_").replace("\\\\", "_")
    return None
'''
KILLED = ("killed", "timeout", "caught by type check", "segfault")


def _tracked() -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    return [p for p in out.decode().split("\0") if p]


def _prepare(target: Target, work: Path) -> None:
    """The checkout as it is now (tracked files, plus the untracked ones tests need),
    with a mutmut section naming the one module and its tests."""
    work.mkdir(parents=True, exist_ok=True)
    for rel in _tracked():
        src, dst = REPO / rel, work / rel
        if not src.exists():  # deleted in the work tree, not yet committed
            continue
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst, follow_symlinks=False)
    for rel in _UNTRACKED:
        src, dst = REPO / rel, work / rel
        if src.exists() and not dst.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            if src.is_symlink():
                os.symlink(os.readlink(src), dst)
            else:
                shutil.copytree(src, dst, symlinks=True)
    tests = [t for t in target.tests if (work / t).exists()]
    section = {
        "source_paths": ["hugind"],
        "only_mutate": [target.module],
        "pytest_add_cli_args_test_selection": tests,
        "pytest_add_cli_args": [
            *("-p", "no:cacheprovider", "-q", "-p", _IDS_PLUGIN),
            *(("-k", " and ".join(f"not {name}" for name in target.exclude)) if target.exclude else ()),
        ],
        "also_copy": ["policy", "runtimes", "examples", "README.md", f"{_IDS_PLUGIN}.py"],
        **dict(target.settings),
    }
    (work / f"{_IDS_PLUGIN}.py").write_text(_IDS_PLUGIN_TEXT)
    text = (REPO / "pyproject.toml").read_text()
    text = re.sub(r"\n\[tool\.mutmut\].*?(?=\n\[|\Z)", "", text, flags=re.S)
    lines = ["", "[tool.mutmut]", *(f"{k} = {json.dumps(v)}" for k, v in section.items())]
    (work / "pyproject.toml").write_text(text.rstrip("\n") + "\n" + "\n".join(lines) + "\n")


def _results(work: Path, env: dict[str, str]) -> dict[str, str]:
    out = subprocess.run(
        [*_MUTMUT, "results", "--all", "true"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found: dict[str, str] = {}
    for line in out.splitlines():
        name, sep, status = line.strip().rpartition(": ")
        if sep:
            found[name] = status
    return found


# Not ``python -m mutmut``: that puts the work dir (the unmutated tree) first on sys.path.
_MUTMUT = (sys.executable, "-c", "import sys; from mutmut.__main__ import cli; sys.exit(cli())")


def _run_bounded(command: list[str], cwd: Path, env: dict[str, str], seconds: float | None) -> int:
    """Run mutmut in a process group of its own; past ``seconds`` end the group (its forked
    workers too). What was tested by then stays in mutmut's records, the rest "not checked"."""
    proc = subprocess.Popen(command, cwd=cwd, env=env, start_new_session=True)
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        return -signal.SIGTERM


def run_target(
    target: Target,
    root: Path,
    jobs: int,
    seconds: float | None = None,
    survivors: bool = False,
    only: tuple[str, ...] = (),
) -> dict:
    work = root / target.name
    had_run = (work / "mutants").is_dir()
    _prepare(target, work)
    # mutmut puts its mutated copy first on sys.path; the tests' subprocesses run from that
    # copy (cwd) too. A PYTHONPATH naming a checkout would bring the unmutated code back.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # The property tests run once per mutant: their derandomized cases, fewer of them.
    env.setdefault("HUGIND_FUZZ_PROFILE", "mutation")
    # mutmut re-tests a mutant it already judged only when named: --survivors names the
    # survivors of the last run (after new tests), so they meet the new tests.
    # A changed test selection makes mutmut forget every verdict (it re-tests only the named
    # ones), so the verdicts of the last run are kept here and only the re-tested ones replaced:
    # a mutant killed then is killed now too, as the selection only grows.
    names: list[str] = []
    before: dict[str, str] = {}
    if survivors and had_run:
        before = _results(work, env)
        names = sorted(n for n, s in before.items() if s in ("survived", "no tests"))
        if not names:
            names = ["-"]  # nothing to re-test: mutmut is not started
    if only and not names:
        names = list(only)  # mutmut's own selection: names or globs of mutants
    started = time.monotonic()
    if names == ["-"]:
        code = 0
    else:
        code = _run_bounded([*_MUTMUT, "run", "--max-children", str(jobs), *names], work, env, seconds)
    elapsed = time.monotonic() - started
    results = _results(work, env)
    if before:
        results = {**before, **{n: results[n] for n in names if n in results}}
    counts = Counter(results.values())
    killed = sum(counts[s] for s in KILLED)
    judged = killed + counts["survived"] + counts["no tests"]  # "not checked": out of time
    return {
        "target": target.name,
        "module": target.module,
        "exit": code,
        "seconds": round(elapsed, 1),
        "counts": dict(counts),
        "score": round(killed / judged, 3) if judged else None,
        "survivors": sorted(n for n, s in results.items() if s in ("survived", "no tests")),
        "workdir": str(work),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("targets", nargs="*", help="target names (see --list)")
    parser.add_argument("--all", action="store_true", help="every target")
    parser.add_argument("--list", action="store_true", help="print the targets and exit")
    parser.add_argument("--jobs", type=int, default=2, help="mutants tested at once (default 2)")
    parser.add_argument("--workdir", type=Path, default=Path(tempfile.gettempdir()) / "hugind-mutation")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument(
        "--mutants",
        nargs="+",
        default=(),
        help="test only these mutants (names or globs, e.g. 'hugind.policy.net.x_parse_url__mutmut_*')",
    )
    parser.add_argument(
        "--survivors",
        action="store_true",
        help="re-test only the survivors of the last run in the same --workdir (after adding tests)",
    )
    parser.add_argument(
        "--minutes",
        type=float,
        help="time for the whole run, shared equally by the targets (what is left untested is "
        "counted 'not checked'; run again with the same --workdir to go on)",
    )
    args = parser.parse_args(argv)
    by_name = {t.name: t for t in TARGETS}
    if args.list:
        for t in TARGETS:
            print(f"{t.name:24} {t.module:34} {' '.join(t.tests)}")
        return 0
    chosen = list(TARGETS) if args.all else [by_name[n] for n in args.targets if n in by_name]
    unknown = [n for n in args.targets if n not in by_name]
    if unknown or not chosen:
        parser.error(f"unknown or no targets {unknown}; see --list")
    share = args.minutes * 60 / len(chosen) if args.minutes else None
    reports = [run_target(t, args.workdir, args.jobs, share, args.survivors, tuple(args.mutants)) for t in chosen]
    for r in reports:
        score = "n/a" if r["score"] is None else f"{100 * r['score']:.1f}%"
        print(f"\n{r['target']} ({r['module']}): {score} in {r['seconds']} s  {r['counts']}")
        for name in r["survivors"]:
            print(f"    survived: {name}")
    if args.json:
        args.json.write_text(json.dumps(reports, indent=2) + "\n")
    return 0 if all(r["exit"] == 0 for r in reports) else 1


if __name__ == "__main__":
    sys.exit(main())
