"""ChatClient against the loopback server: requests, responses, sessions."""

from __future__ import annotations

import uuid

import pytest

from hugind.llm import SESSION_HEADER, BackendConfigError, ChatClient, api_base
from tests.support.chat_server import ChatServer, Reply, tool_call

MESSAGES = [{"role": "user", "content": "hi"}]


def test_plain_completion_and_request_shape(server, make_client):
    server.push(Reply("hello there", usage={"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}))
    client = make_client(api_key="sk-secret", headers={"X-Team": "blue"})
    result = client.complete(MESSAGES, response_format={"type": "json_object"}, extra={"temperature": 0.2})
    assert result.content == "hello there"
    assert result.finish_reason == "stop"
    assert (result.usage.prompt_tokens, result.usage.total_tokens) == (7, 10)
    assert result.attempts == 1 and result.elapsed_s > 0
    req = server.chat_requests[0]
    assert req.path == "/v1/chat/completions"
    assert req.body == {
        "messages": MESSAGES,
        "stream": False,
        "model": "test-model",
        "response_format": {"type": "json_object"},
        "temperature": 0.2,
    }
    assert req.headers["authorization"] == "Bearer sk-secret"
    assert req.headers["x-team"] == "blue"


def test_reasoning_fields_both_spellings(server, client):
    server.push(Reply("a", reasoning="think 1"), Reply("b", reasoning="think 2", reasoning_key="reasoning"))
    assert client.complete(MESSAGES).reasoning == "think 1"
    assert client.complete(MESSAGES).reasoning == "think 2"


def test_native_tool_calls_non_streamed(server, client):
    server.push(
        Reply(
            None,
            tool_calls=[tool_call("read", {"path": "/a"}, id="c1"), tool_call("run", {"cmd": "ls"}, id="c2")],
        )
    )
    tools = [{"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}]
    result = client.complete(MESSAGES, tools=tools)
    assert result.content == ""
    assert [(c.id, c.name, c.arguments_json) for c in result.tool_calls] == [
        ("c1", "read", '{"path": "/a"}'),
        ("c2", "run", '{"cmd": "ls"}'),
    ]
    assert result.finish_reason == "tool_calls"
    assert server.chat_requests[0].body["tools"] == tools


def test_url_without_v1_and_without_model(server):
    server.push(Reply("ok"))
    with ChatClient(server.base, "", session_mode="stateless") as client:
        assert client.chat_url == f"{server.base}/v1/chat/completions"
        assert client.complete(MESSAGES).content == "ok"
    assert "model" not in server.chat_requests[0].body


def test_server_accepts_path_without_v1(server):
    server.push(Reply("ok"))
    with ChatClient(f"{server.base}/chat/completions", "m") as client:
        # A URL ending in /chat/completions is trimmed back to its base.
        assert client.base_url == server.base
        assert client.complete(MESSAGES).content == "ok"
    assert server.chat_requests[0].path == "/chat/completions"


@pytest.mark.parametrize(
    ("url", "base"),
    [
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080/v1"),
        ("http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1"),
        ("https://api.example.test/v1/", "https://api.example.test/v1"),
        ("http://h:1/api/v1/chat/completions", "http://h:1/api/v1"),
    ],
)
def test_api_base(url, base):
    assert api_base(url) == base


@pytest.mark.parametrize("url", ["ftp://x/v1", "127.0.0.1:8080", "", "http://"])
def test_api_base_rejects(url):
    with pytest.raises(BackendConfigError):
        api_base(url)


def test_list_models(client):
    assert client.list_models() == ["test-model"]


def test_session_fresh_is_new_per_client(server, make_client):
    server.push(Reply("1"), Reply("2"), Reply("3"))
    first, second = make_client(), make_client()
    first.complete(MESSAGES)
    first.complete(MESSAGES)
    second.complete(MESSAGES)
    ids = [r.headers.get(SESSION_HEADER.lower()) for r in server.chat_requests]
    assert ids[0] == ids[1] == first.session_id
    assert ids[2] == second.session_id != ids[0]
    uuid.UUID(ids[0])


def test_session_resume_sends_given_id(server, make_client):
    server.push(Reply("1"))
    make_client(session_mode="resume", session_id="sess-42").complete(MESSAGES)
    assert server.chat_requests[0].headers[SESSION_HEADER.lower()] == "sess-42"


def test_session_stateless_sends_no_header(server, make_client):
    server.push(Reply("1"))
    client = make_client(session_mode="stateless")
    client.complete(MESSAGES)
    assert client.session_id is None
    assert SESSION_HEADER.lower() not in server.chat_requests[0].headers


@pytest.mark.parametrize(
    ("kwargs", "needle"),
    [
        ({"session_mode": "resume"}, "session_id"),
        ({"session_mode": "sticky"}, "session_mode"),
        ({"timeout": 0}, "timeout"),
    ],
)
def test_bad_client_settings(kwargs, needle):
    with pytest.raises(BackendConfigError, match=needle):
        ChatClient("http://127.0.0.1:9/v1", "m", **kwargs)


def test_server_records_every_request():
    with ChatServer([Reply("x")]) as chat, ChatClient(chat.url, "m") as client:
        client.complete(MESSAGES)
        client.list_models()
        assert [r.method for r in chat.requests] == ["POST", "GET"]
        assert chat.backend_seconds >= 0
