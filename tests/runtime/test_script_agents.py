"""Script agents through the real engine: entry, result, args, env, errors."""

from __future__ import annotations

import re

import pytest

from hugind.errors import AgentFailed, EnvMissingError, ManifestError
from hugind.jscheck import JsCompileError
from tests.runtime.helpers import run_captured


def test_default_export_sync_value(make_agent):
    agent = make_agent({"main.js": "export default function (input) { return {n: input.args.length}; }"})
    out = run_captured(agent, "a", "b")
    assert (out.result.has_result, out.result.value) == (True, {"n": 2})


def test_default_export_promise_is_awaited(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default async function () {
              await new Promise((r) => setTimeout(r, 5));
              return "late";
            }
            """
        }
    )
    assert run_captured(agent).result.value == "late"


def test_default_export_returning_undefined_gives_null(make_agent):
    agent = make_agent({"main.js": "export default function () {}"})
    out = run_captured(agent)
    assert (out.result.has_result, out.result.value) == (True, None)


def test_module_without_default_export_has_no_result(make_agent):
    agent = make_agent({"main.js": "print('program output');"})
    out = run_captured(agent)
    assert out.result.has_result is False
    assert out.stdout == "program output\n"


def test_non_function_default_export_is_the_result(make_agent):
    agent = make_agent({"main.js": "export default {answer: 42};"})
    assert run_captured(agent).result.value == {"answer": 42}


def test_set_result_takes_precedence_over_return(make_agent):
    agent = make_agent(
        {"main.js": "export default async function () { set_result({via: 'set_result'}); return 'returned'; }"}
    )
    assert run_captured(agent).result.value == {"via": "set_result"}


def test_set_result_without_default_export(make_agent):
    agent = make_agent({"main.js": "set_result([1, 2, 3]);"})
    out = run_captured(agent)
    assert (out.result.has_result, out.result.value) == (True, [1, 2, 3])


def test_args_reach_input_and_get_args_json(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default function (input) {
              const viaGlobal = JSON.parse(get_args_json());
              return {args: input.args, same: JSON.stringify(viaGlobal) === JSON.stringify(input),
                      alias: get_args() === get_args_json()};
            }
            """
        }
    )
    value = run_captured(agent, "x y", "--flag").result.value
    assert value == {"args": ["x y", "--flag"], "same": True, "alias": True}


def test_only_declared_env_is_passed(make_agent):
    agent = make_agent(
        {"main.js": "export default function (input) { return input.meta.env; }"},
        env=["DECLARED", {"name": "OPTIONAL_ABSENT"}],
    )
    env = {"DECLARED": "yes", "UNDECLARED_SECRET": "hunter2"}
    assert run_captured(agent, env=env).result.value == {"DECLARED": "yes"}


def test_session_meta_is_present(make_agent):
    agent = make_agent({"main.js": "export default (input) => typeof input.meta.session.id"})
    assert run_captured(agent).result.value == "string"


def test_required_env_missing_fails_before_agent_code_runs(make_agent):
    agent = make_agent(
        {"main.js": "print('agent code ran'); export default () => 1;"},
        env=[{"name": "API_TOKEN", "required": True}, {"name": "OTHER", "required": True}],
    )
    with pytest.raises(EnvMissingError, match="API_TOKEN, OTHER") as info:
        run_captured(agent, env={})
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("specifier", "fragment"),
    [
        ("lodash", "only relative imports"),
        ("/etc/passwd.js", "only relative imports"),
        ("../outside.js", "outside the agent root"),
        ("./lib/../../outside.js", "outside the agent root"),
        ("./data.json", "only .js modules"),
        ("./missing.js", "not found"),
        ("node:fs", "only relative imports"),
        ("https://example.com/x.js", "only relative imports"),
    ],
)
def test_import_rules(make_agent, specifier, fragment):
    agent = make_agent({"main.js": f'import x from "{specifier}";\nexport default () => x;', "data.json": "{}"})
    with pytest.raises(AgentFailed) as info:
        run_captured(agent)
    assert info.value.name == "ModuleError"
    assert fragment in info.value.js_message
    assert specifier in info.value.js_message


def test_dynamic_import_follows_the_same_rules(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default async function () {
              const ok = await import("./lib/util.js");
              try { await import("../escape.js"); return "escaped"; }
              catch (e) { return [ok.value, e.name]; }
            }
            """,
            "lib/util.js": "export const value = 7;",
        }
    )
    assert run_captured(agent).result.value == [7, "ModuleError"]


def test_symlink_leading_outside_root_is_refused(make_agent, tmp_path):
    outside = tmp_path / "secret.js"
    outside.write_text("export default 'stolen';")
    agent = make_agent({"main.js": 'import s from "./link.js"; export default () => s;'})
    (agent / "link.js").symlink_to(outside)
    with pytest.raises(AgentFailed, match="leads outside the agent root"):
        run_captured(agent)


def test_nested_relative_imports_resolve_from_the_importing_module(make_agent):
    agent = make_agent(
        {
            "main.js": 'import {a} from "./lib/a.js"; export default () => a;',
            "lib/a.js": 'import {b} from "../shared/b.js"; export const a = "a" + b;',
            "shared/b.js": 'export const b = "b";',
        }
    )
    assert run_captured(agent).result.value == "ab"


def test_top_level_throw_is_reported_with_stack(make_agent):
    agent = make_agent(
        {
            "main.js": """
            import "./lib/setup.js";
            export default () => "never";
            """,
            "lib/setup.js": """
            function configure() {
              throw new TypeError("setup exploded");
            }
            configure();
            """,
        }
    )
    with pytest.raises(AgentFailed) as info:
        run_captured(agent)
    err = info.value
    assert (err.name, err.js_message) == ("TypeError", "setup exploded")
    assert "lib/setup.js:3" in err.stack
    assert "hugind:prelude" not in err.stack


def test_syntax_error_is_reported_with_location(make_agent):
    agent = make_agent({"main.js": "export default function () {\n  let x = ;\n}\n"})
    # Source that does not compile is bad input (exit 2), located as compilers do.
    with pytest.raises(JsCompileError) as info:
        run_captured(agent)
    assert info.value.js_name == "SyntaxError" and info.value.exit_code == 2
    assert info.value.message.endswith("main.js:2:11: SyntaxError: unexpected token in expression: ';'")


def test_rejected_promise_fails_the_run(make_agent):
    agent = make_agent({"main.js": "export default async () => { throw new RangeError('nope'); }"})
    with pytest.raises(AgentFailed, match="RangeError: nope"):
        run_captured(agent)


def test_throwing_a_non_error_value_is_reported(make_agent):
    agent = make_agent({"main.js": "export default () => { throw {code: 7}; }"})
    with pytest.raises(AgentFailed, match=re.escape('{"code":7}')):
        run_captured(agent)


def test_awaiting_a_promise_that_never_settles_is_reported_not_hung(make_agent):
    agent = make_agent({"main.js": "export default () => new Promise(() => {});"})
    with pytest.raises(AgentFailed, match="can never settle"):
        run_captured(agent)


def test_unserializable_result_is_an_agent_error(make_agent):
    agent = make_agent({"main.js": "export default () => { const o = {}; o.self = o; return o; }"})
    with pytest.raises(AgentFailed, match="TypeError"):
        run_captured(agent)


def test_deep_recursion_is_a_catchable_range_error(make_agent):
    agent = make_agent(
        {
            "main.js": """
            export default function () {
              let depth = 0;
              function down() { depth++; down(); }
              try { down(); } catch (e) { return [e.name, depth > 1000]; }
            }
            """
        }
    )
    assert run_captured(agent).result.value == ["RangeError", True]


def test_unknown_manifest_key_is_named(make_agent):
    from hugind.manifest import load_agent

    agent = make_agent({"main.js": "export default 1"}, entrypoint="main.js")
    with pytest.raises(ManifestError, match="unknown key 'entrypoint'"):
        load_agent(agent)
