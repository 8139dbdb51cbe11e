"""FallbackClient against real loopback servers: what moves the chain on, and what does not."""

from __future__ import annotations

import pytest

from hugind.llm import BackendAuthError, BackendConfig, PermanentBackendError, TransientBackendError
from hugind.llm.fallback import FallbackClient, chain_of
from tests.support.chat_server import ChatServer, HttpError, Reply, free_port

MESSAGES = [{"role": "user", "content": "hi"}]


def _chain(primary_url: str, spare_url: str, **primary: object) -> list[BackendConfig]:
    spare = BackendConfig(spare_url, "m2", name="spare", max_retries=0)
    first = BackendConfig(primary_url, "m1", name="main", max_retries=0, session_id="sid-1", fallbacks=(spare,))
    return chain_of(first)


def _client(chain: list[BackendConfig], switches: list[tuple[str, str | None, str]]) -> FallbackClient:
    return FallbackClient(chain, on_switch=lambda *s: switches.append(s))


@pytest.mark.parametrize(
    ("status", "error"),
    [(401, BackendAuthError), (403, BackendAuthError), (400, PermanentBackendError), (422, PermanentBackendError)],
)
def test_a_4xx_does_not_switch(status, error):
    switches: list = []
    with ChatServer(default=HttpError(status, {"error": {"message": "no"}})) as main, ChatServer() as spare:
        client = _client(_chain(main.url, spare.url), switches)
        with pytest.raises(error):
            client.complete(MESSAGES)
        client.close()
        assert spare.requests == [] and switches == []


def test_connection_refused_switches_and_the_session_id_is_kept():
    switches: list = []
    with ChatServer([Reply("spare here"), Reply("again")]) as spare:
        client = _client(_chain(f"http://127.0.0.1:{free_port()}/v1", spare.url), switches)
        assert client.complete(MESSAGES).content == "spare here"
        assert client.complete(MESSAGES).content == "again"  # sticky: no second try of the dead one
        client.close()
        assert [r.headers["x-session-id"] for r in spare.chat_requests] == ["sid-1", "sid-1"]
    assert len(switches) == 1 and "unreachable" in switches[0][2]


def test_429_past_the_budget_and_quota_exhausted_switch():
    for body in ({"error": {"message": "slow down"}}, {"error": {"message": "insufficient_quota"}}):
        switches: list = []
        with ChatServer(default=HttpError(429, body)) as main, ChatServer([Reply("ok")]) as spare:
            client = _client(_chain(main.url, spare.url), switches)
            assert client.complete(MESSAGES).content == "ok"
            client.close()
        assert len(switches) == 1 and "429" in switches[0][2]


def test_the_last_backend_failing_raises_its_own_error():
    with ChatServer(default=HttpError(500, {})) as main, ChatServer(default=HttpError(502, {})) as spare:
        client = _client(_chain(main.url, spare.url), [])
        with pytest.raises(TransientBackendError, match="HTTP 502"):
            client.complete(MESSAGES)
        client.close()


def test_a_stream_the_caller_has_seen_is_not_replayed_elsewhere():
    from tests.support.chat_server import Stream

    partial = Stream([{"choices": [{"index": 0, "delta": {"content": "half an"}, "finish_reason": None}]}], drop=True)
    with ChatServer([partial]) as main, ChatServer([Reply("never")]) as spare:
        client = _client(_chain(main.url, spare.url), [])
        tokens: list[str] = []
        with pytest.raises(TransientBackendError):
            client.complete(MESSAGES, stream=True, on_token=tokens.append)
        client.close()
        assert tokens == ["half an"] and spare.requests == []
