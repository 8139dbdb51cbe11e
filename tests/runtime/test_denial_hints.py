"""After a run with denials, stderr names each denying rule and the agent.yaml key that
would allow it: once per run, never in what the guest sees, guest text escaped."""

from __future__ import annotations

import json

import pytest

from hugind.denial_hints import denial_summary, how_to_allow
from tests.conftest import run_cli

PROBE = """
export default async function () {
  const seen = [];
  for (const attempt of [
    () => run_command("ls"),
    () => fs.read_text("/etc/hostname"),
    () => fs.read_text("/etc/passwd"),
    // http_get_async hands the URL to the host as written (fetch() would percent-encode it first)
    () => http_get_async("http://localhost/\\u001b[2J"),  // a name that stays on this machine
  ]) {
    try { await attempt(); seen.push("allowed"); } catch (e) { seen.push(String(e)); }
  }
  return seen;
}
"""


def test_the_hint_follows_the_error_line_of_a_failed_run(tmp_path):
    agent = tmp_path / "fails.js"
    agent.write_text("export default () => fs.read_text('/etc/hostname');")
    res = run_cli("run", str(agent))
    assert res.code == 1
    lines = res.stderr.splitlines()
    assert lines[0].startswith("hugind: error: PermissionDenied: filesystem: read_text '/etc/hostname' denied")
    # A bare file has no agent.yaml to edit: the hint says how to make one (issue 28).
    hint = lines.index(
        "hugind: the policy denied 1 request; fails.js runs without an agent.yaml, so every capability is denied."
    )
    assert all(line.startswith("    at ") for line in lines[1:hint])  # the error's JS stack, then the hint
    assert "`hugind init DIR`" in lines[hint + 1]
    assert "`name: fails` and `entry_point: fails.js`" in lines[hint + 2]
    assert lines[hint + 3].endswith("then add to agent.yaml:")
    assert lines[hint + 4].startswith('hugind:   filesystem.mode "/etc/hostname": ')
    assert len(lines) == hint + 5


def test_denials_get_one_hint_block_on_stderr_only(tmp_path):
    agent = tmp_path / "probe"  # a folder with the least agent.yaml: the hint says to edit it
    agent.mkdir()
    (agent / "probe.js").write_text(PROBE)
    (agent / "agent.yaml").write_text("name: probe\nentry_point: probe.js\n")
    res = run_cli("run", str(agent))
    assert res.code == 0, res.stderr
    seen = json.loads(res.stdout)
    assert all(s.startswith("PermissionDenied: ") for s in seen), seen
    assert not any("agent.yaml" in s or "permissions." in s.split("(")[0] for s in seen)  # guest text unchanged
    lines = [line for line in res.stderr.splitlines() if line.startswith("hugind:")]
    assert lines[0] == "hugind: the policy denied 4 requests; to allow, edit agent.yaml:"
    assert res.stderr.count("the policy denied") == 1
    by_rule = {line.split()[1]: line for line in lines[1:]}
    assert set(by_rule) == {"shell.allow", "filesystem.mode", "network.allow"}
    assert "permissions.shell.whitelist" in by_rule["shell.allow"] and '"ls"' in by_rule["shell.allow"]
    assert "(x2)" in by_rule["filesystem.mode"] and "permissions.filesystem.read" in by_rule["filesystem.mode"]
    assert "permissions.network.allowed_domains" in by_rule["network.allow"]
    assert "\x1b" not in res.stderr and "\\u001b[2J" in by_rule["network.allow"]


def test_a_run_without_denials_prints_no_hint(tmp_path):
    agent = tmp_path / "quiet.js"
    agent.write_text("export default () => 1;")
    res = run_cli("run", str(agent))
    assert res.code == 0 and res.stdout.strip() == "1"
    assert "policy denied" not in res.stderr


def test_the_hint_comes_with_a_failing_strict_run(tmp_path):
    agent = tmp_path / "strict.js"
    agent.write_text("export default async () => { try { await run_command('id'); } catch {} return 0; };")
    res = run_cli("run", str(agent), "--strict")
    assert res.code == 3
    assert "shell.allow" in res.stderr and "--strict and --policy presets can only tighten" in res.stderr
    lines = res.stderr.splitlines()
    error = next(i for i, line in enumerate(lines) if line.startswith("hugind: error: --strict"))
    assert lines[error + 1].startswith("hugind: the policy denied 1 request;")  # the hint follows the error


@pytest.mark.parametrize("rule", ["network.blocked-range", "filesystem.internal", "shell.syntax", "x.host-refusal"])
def test_rules_no_key_can_lift_say_so(rule):
    assert how_to_allow(rule).startswith("no permission allows this")


def test_summary_skips_allowed_entries_and_counts_per_rule():
    entries = [
        {"decision": "allow", "rule": "filesystem.read:data", "request": {"path": "data/a"}},
        {"decision": "deny", "rule": "shell.whitelist", "request": {"op": "spawn", "program": "curl"}},
        {"decision": "deny", "rule": "shell.whitelist", "request": {"op": "spawn", "program": "wget"}},
    ]
    lines = denial_summary(entries)
    assert lines == [
        "hugind: the policy denied 2 requests; to allow, edit agent.yaml:",
        'hugind:   shell.whitelist (x2) "curl": add the program to permissions.shell.whitelist',
    ]
    assert denial_summary(entries[:1]) == []
