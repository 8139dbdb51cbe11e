"""Secrets never enter a record: the backend's API key, credential headers, env values."""

from __future__ import annotations

import json

from tests.replay.helpers import record_run, replay
from tests.support.chat_server import ChatServer, Reply
from tests.support.http_server import RecordingServer, reply

API_KEY = "sk-test-api-key-5b7c1e9f"
DECLARED = "declared-token-0d3f8a61"
UNDECLARED = "undeclared-secret-91c4e2b7"
COOKIE = "session=cookie-value-77aa"


def test_no_secret_is_written(make_agent, tmp_path):
    page = RecordingServer()
    page.routes["/p"] = lambda h: reply(h, 200, b"ok")
    agent = make_agent(
        {
            "main.js": f"""
            export default async function main({{meta}}) {{
              const url = {json.dumps(page.url("/p"))};
              const res = await fetch(url, {{headers: {{"Authorization": "Bearer " + meta.env.TOKEN,
                                                         "Cookie": {json.dumps(COOKIE)}}}}});
              const answer = await ask_llm("hello");
              return {{status: res.status, answer, token_len: meta.env.TOKEN.length, token: meta.env.TOKEN}};
            }}
            """
        },
        manifest={
            "name": "secretive",
            "entry_point": "main.js",
            "env": [{"name": "TOKEN", "required": True}],
            "permissions": {"network": {"allow": True, "allowed_ips": [f"127.0.0.1:{page.port}"]}},
        },
    )
    home = tmp_path / "home"
    home.mkdir()
    env = {"HUGIND_HOME": str(home), "MY_KEY": API_KEY, "TOKEN": DECLARED, "UNDECLARED_SECRET": UNDECLARED}
    record = tmp_path / "run.hgrec"
    try:
        with ChatServer([Reply("hi there")]) as chat:
            (home / "config.yaml").write_text(
                f"backends:\n  local:\n    url: {chat.url}\n    model: m\n    api_key_env: MY_KEY\n"
            )
            first = record_run(agent, record, "--backend", "local", env=env)
            sent = chat.chat_requests[0].headers
    finally:
        page.close()
    assert first.code == 0, first.stderr
    assert API_KEY in json.dumps(sent)  # the key did reach the backend ...
    got = {k.lower(): v for k, v in page.requests[0]["headers"].items()}
    assert DECLARED in first.stdout and got["authorization"].endswith(DECLARED)
    text = record.read_text()
    for secret in (API_KEY, DECLARED, UNDECLARED, "cookie-value-77aa"):
        assert secret not in text  # ... but nothing of it is in the record
    assert "<<hugind-env:TOKEN:0>>" in text and "<redacted>" in text
    # Given the same env, the replay puts the value back where the agent had it.
    again = replay(record, env={"TOKEN": DECLARED, "HUGIND_HOME": str(home)})
    assert again.code == 0, again.stderr
    assert again.stdout == first.stdout
