"""The fused start (runtimes/wasm/ABI.md, "Fused start"): the JS engine is
configured and started in one export call, with the entry module's source
handed over instead of fetched through module.resolve/module.load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hugind.errors import AgentFailed
from hugind.jscheck import JsCompileError
from hugind.manifest import load_agent
from hugind.run import RunOptions, make_policy, open_session
from tests.runtime.helpers import run_captured


class Session:
    """A real AgentSession whose host requests and export calls are recorded."""

    def __init__(self, agent_dir: Path) -> None:
        sink: list[bytes] = []
        self.output = sink
        options = RunOptions(stdout=sink.append, stderr=sink.append, host_env={})
        self.policy = make_policy(load_agent(agent_dir), options)
        self.session = open_session(load_agent(agent_dir), options, self.policy, {}, {})
        self.ops: list[str] = []
        self.exports: list[str] = []
        dispatcher, guest = self.session.dispatcher, self.session.instance
        call, enter = dispatcher.call, guest.enter

        def recording_call(raw: bytes) -> bytes:
            self.ops.append(raw.split(b'"op":"', 1)[1].split(b'"', 1)[0].decode())
            return call(raw)

        def recording_enter(name: str, *args: int, budget_s: float):
            self.exports.append(name)
            return enter(name, *args, budget_s=budget_s)

        dispatcher.call = recording_call  # type: ignore[method-assign]
        guest.enter = recording_enter  # type: ignore[method-assign]

    def run(self):
        try:
            self.session.run_main()
            return self.session.result()
        finally:
            self.session.close()
            self.policy.close()
            self.policy.audit.close()


def test_the_entry_arrives_with_the_start_and_the_limits_in_one_call(make_agent):
    probe = Session(make_agent({"main.js": "export default (input) => ['ok', input.args.length];"}))
    assert probe.run() == (True, ["ok", 0])
    assert probe.exports == ["hugind_alloc", "hugind_js_start"]
    assert probe.ops == ["agent.done"]


def test_the_entrys_own_imports_still_go_through_the_host(make_agent):
    files = {"main.js": "import { two } from './lib/two.js';\nexport default () => two();", "lib/two.js": ""}
    files["lib/two.js"] = "export const two = () => 2;"
    probe = Session(make_agent(files))
    assert probe.run() == (True, 2)
    assert probe.ops == ["module.resolve", "module.load", "agent.done"]


def test_an_entry_that_imports_itself_gets_the_same_module(make_agent):
    source = "import * as me from './main.js';\nexport const x = 1;\nexport default () => me.x + 1;"
    assert Session(make_agent({"main.js": source})).run() == (True, 2)


def test_a_syntax_error_in_the_entry_is_reported_as_before(make_agent):
    agent = make_agent({"main.js": "export default () => {"})
    with pytest.raises(JsCompileError) as info:
        run_captured(agent)
    assert str(info.value).endswith("main.js:1:23: SyntaxError: unexpected token in expression: ''")


def test_an_entry_the_host_cannot_read_fails_in_the_guest_as_before(make_agent):
    agent = make_agent({"main.js": "export default 1;"})
    (agent / "main.js").write_bytes(b"export default '\xff';")  # not UTF-8: module.load refuses it
    probe = Session(agent)
    with pytest.raises(AgentFailed, match="not valid UTF-8"):
        probe.run()
    assert "hugind_main" in probe.exports and "hugind_js_configure" in probe.exports
    assert probe.ops[:2] == ["module.resolve", "module.load"]


def test_a_recorded_run_keeps_the_separate_calls_and_replays(make_agent, tmp_path):
    from tests.replay.helpers import lines, record_run, replay

    agent = make_agent({"main.js": "export default () => 7;"})
    record = tmp_path / "run.hgrec"
    assert record_run(agent, record).code == 0
    taped = json.dumps(lines(record))
    assert "module.resolve" in taped and "module.load" in taped  # the tape lists the entry's module ops
    again = replay(record)
    assert again.code == 0, again.stderr


@pytest.mark.parametrize(
    "layout",
    [
        (5, 0, 3),  # an empty name
        (5, 4, -1),  # a negative source length
    ],
)
def test_the_engine_refuses_a_malformed_start_buffer(make_agent, layout):
    msg_len, name_len, src_len = layout
    probe = Session(make_agent({"main.js": "export default 1;"}))
    guest = probe.session.instance
    ptr = guest.write_bytes(b"x" * 32, budget_s=5)
    assert guest.enter("hugind_js_start", ptr, msg_len, name_len, src_len, 1 << 24, 1 << 18, budget_s=5) == -2
    probe.session.close()


def test_a_name_or_source_without_its_nul_is_refused(make_agent):
    probe = Session(make_agent({"main.js": "export default 1;"}))
    guest = probe.session.instance
    data = b"{}" + b"main.js" + b"!" + b"export default 1;" + b"\0"
    ptr = guest.write_bytes(data, budget_s=5)
    assert guest.enter("hugind_js_start", ptr, 2, 7, 17, 1 << 24, 1 << 18, budget_s=5) == -2
    probe.session.close()
