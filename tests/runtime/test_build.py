"""hugind build: bytecode artifacts run exactly like their source agents."""

from __future__ import annotations

import json

import pytest

from hugind import artifact
from hugind.errors import AgentFailed, InvalidModule
from tests.conftest import REPO
from tests.runtime.helpers import run_captured

MULTI = {
    "main.js": """
    import {total} from "./lib/math.js";
    import {label} from "./lib/text/label.js";
    print("side effect at load");
    export default async function (input) {
      await new Promise((r) => setTimeout(r, 1));
      return {label: label(input.args[0] || "none"), total: total([1, 2, 3])};
    }
    """,
    "lib/math.js": (
        "import {twice} from './util.js';\nexport const total = (xs) => twice(xs.reduce((a, b) => a + b, 0));"
    ),
    "lib/util.js": "export const twice = (n) => n * 2;",
    "lib/text/label.js": "import {twice} from '../util.js'; export const label = (s) => `${s}:${twice(1)}`;",
    "unused.js": "throw new Error('never imported, never compiled');",
}


def test_hello_artifact_output_equals_the_source_agent(cli, tmp_path):
    out = tmp_path / "hello.wasm"
    built = cli("build", str(REPO / "examples/hello"), "-o", str(out))
    assert built.code == 0, built.stderr
    source_run = cli("run", str(REPO / "examples/hello"), "--", "world")
    artifact_run = cli("run", str(out), "--", "world")
    assert artifact_run.code == source_run.code == 0
    assert json.loads(artifact_run.stdout) == json.loads(source_run.stdout)
    assert artifact_run.stderr == source_run.stderr


def test_multi_module_artifact_carries_exactly_the_import_graph(make_agent, cli, tmp_path):
    agent = make_agent(MULTI)
    out = tmp_path / "multi.wasm"
    assert cli("build", str(agent), "-o", str(out)).code == 0
    art = artifact.decode(out.read_bytes(), "multi.wasm")
    assert sorted(art.modules) == ["lib/math.js", "lib/text/label.js", "lib/util.js", "main.js"]
    assert art.entry == "main.js"
    source_run = run_captured(agent, "x")
    artifact_run = run_captured(out, "x")
    assert artifact_run.result.value == source_run.result.value == {"label": "x:2", "total": 12}
    assert artifact_run.stdout == source_run.stdout == "side effect at load\n"


def test_artifact_keeps_the_manifest_policy(make_agent, cli, tmp_path):
    agent = make_agent(
        {"main.js": "export default (input) => input.meta.env;"},
        env=[{"name": "TOKEN", "required": True}],
    )
    out = tmp_path / "a.wasm"
    assert cli("build", str(agent), "-o", str(out)).code == 0
    missing = cli("run", str(out))
    assert missing.code == 2 and "TOKEN" in missing.stderr
    present = cli("run", str(out), env={"TOKEN": "t"})
    assert json.loads(present.stdout) == {"TOKEN": "t"}


def test_artifact_is_sealed_against_files_beside_it(make_agent, cli, tmp_path):
    agent = make_agent({"main.js": "export default async () => (await import('./late.js')).v;"})
    out = tmp_path / "sealed.wasm"
    assert cli("build", str(agent), "-o", str(out)).code == 0
    (tmp_path / "late.js").write_text("export const v = 'planted';")
    with pytest.raises(AgentFailed, match="not in the artifact"):
        run_captured(out)


def test_build_reports_syntax_errors_and_refused_imports(make_agent, cli, tmp_path):
    bad = make_agent({"main.js": "import './lib/x.js'; export default 1;", "lib/x.js": "let = ;"})
    res = cli("build", str(bad), "-o", str(tmp_path / "x.wasm"))
    assert res.code == 1 and "SyntaxError" in res.stderr and "lib/x.js" in res.stderr
    bare = make_agent({"main.js": "import 'left-pad'; export default 1;"})
    res = cli("build", str(bare), "-o", str(tmp_path / "y.wasm"))
    assert res.code == 1 and "import 'left-pad' refused" in res.stderr
    assert not (tmp_path / "x.wasm").exists() and not (tmp_path / "y.wasm").exists()


def test_artifact_for_another_engine_build_is_refused(make_agent, cli, tmp_path):
    agent = make_agent({"main.js": "export default 1;"})
    out = tmp_path / "a.wasm"
    assert cli("build", str(agent), "-o", str(out)).code == 0
    art = artifact.decode(out.read_bytes(), "a")
    forged = tmp_path / "forged.wasm"
    forged.write_bytes(artifact.encode(artifact.Artifact("0" * 64, art.entry, art.manifest_text, art.modules)))
    with pytest.raises(InvalidModule, match="different JS engine build"):
        run_captured(forged)


def test_truncated_artifact_is_refused(make_agent, cli, tmp_path):
    agent = make_agent({"main.js": "export default 1;"})
    out = tmp_path / "a.wasm"
    assert cli("build", str(agent), "-o", str(out)).code == 0
    out.write_bytes(out.read_bytes()[:-40])
    res = cli("run", str(out))
    assert res.code == 2 and "not a valid hugind artifact" in res.stderr
