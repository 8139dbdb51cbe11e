"""MessageChannel, MessagePort and MessageEvent (runtimes/js/web/messaging.js)."""

from __future__ import annotations

from tests.runtime.test_web_globals import SCRIPTS, _agent, _compare, _hugind, needs_node


@needs_node
def test_messaging_matches_node(tmp_path):
    out = _compare(tmp_path, "messaging", (SCRIPTS / "messaging.mjs").read_text())
    assert '["echo","through the moved port"]' in out


def test_a_port_starts_at_onmessage_or_start_not_at_add_event_listener(tmp_path):
    """HTML: only setting onmessage starts a port implicitly (node also starts one at
    addEventListener). A port left with a handler does not keep the run alive."""
    source = (
        "const { port1, port2 } = new MessageChannel();\n"
        "const seen = [];\n"
        "port1.addEventListener('message', (e) => seen.push(e.data));\n"
        "port2.postMessage('queued');\n"
        "await new Promise((r) => setTimeout(r, 20));\n"
        "console.log(JSON.stringify(seen));\n"
        "port1.start();\n"
        "await new Promise((r) => setTimeout(r, 20));\n"
        "console.log(JSON.stringify(seen));\n"
        "const other = new MessageChannel();\n"
        "other.port1.onmessage = () => {};\n"
    )
    got = _hugind(_agent(tmp_path / "agent", source))
    assert got.returncode == 0, got.stderr.decode()
    assert got.stdout.decode().splitlines() == ["[]", '["queued"]']
