"""Secrets never enter a record: the backend's API key, credential headers, env values."""

from __future__ import annotations

import base64
import json
from urllib.parse import quote

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


def test_a_secret_split_across_streamed_tokens_or_encoded_is_scrubbed(make_agent, tmp_path):
    """The model streams the declared value back in 3-character tokens, and base64- and
    URL-encoded inside longer strings: none of it reaches the record, and replay given
    the same env prints what the run printed."""
    secret = "tok-Zq81/x+7Rm2p=Lw0vB"
    basic = base64.b64encode(f"user:{secret}".encode()).decode()  # the value at an offset of 5 bytes
    urlsafe = base64.urlsafe_b64encode(f"k{secret}".encode()).decode()
    quoted = quote(f"next={secret}&x=1", safe="")
    answer = f"It is {secret}; as Basic {basic}; safe {urlsafe}; url {quoted}."
    agent = make_agent(
        {"main.js": 'set_system_prompt("echo");\n'},
        manifest={
            "name": "streamer",
            "entry_point": "main.js",
            "mode": "agentic",
            "tool_format": "text",
            "env": [{"name": "TOKEN", "required": True}],
        },
    )
    home = tmp_path / "home"
    home.mkdir()
    env = {"HUGIND_HOME": str(home), "TOKEN": secret}
    record = tmp_path / "stream.hgrec"
    with ChatServer([Reply(answer, content_chunk=3)]) as chat:
        first = record_run(agent, record, "--backend", chat.url, "--stream", "--", "go", env=env)
    assert first.code == 0, first.stderr
    assert json.loads(first.stdout) == answer
    text = record.read_text()
    tokens = [t for line in text.splitlines() for t in json.loads(line).get("tokens", [])]
    assert len(tokens) > 5  # the answer was streamed, in pieces
    for form in (secret, json.dumps(secret)[1:-1], basic, urlsafe, quoted, quote(secret, safe="")):
        assert form not in text
    for piece in (basic[8:-8], urlsafe[4:-4]):  # the value's own base64 characters, whatever surrounds them
        assert piece not in text
    again = replay(record, env=env)
    assert again.code == 0, again.stderr
    assert again.stdout == first.stdout


def test_scrubber_joins_only_the_tokens_a_secret_spans():
    from hugind.replay.scrub import Scrubber

    scrub = Scrubber({"KEY": "secret-value-1234"})
    assert scrub.tokens(["a ", "secr", "et-val", "ue-1234", " b", "c"]) == ["a ", "secret-value-1234", " b", "c"]
    assert scrub.tokens(["no ", "secret ", "here"]) == ["no ", "secret ", "here"]
    line = scrub.text(json.dumps(scrub.tokens(["x secret-v", "alue-1234 y"])))
    assert "secret-value-1234" not in line and "<<hugind-env:KEY:0>>" in line
    assert scrub.restore(line) == json.dumps(["x secret-value-1234 y"])
