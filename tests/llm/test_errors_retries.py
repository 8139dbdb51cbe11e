"""Error taxonomy and retries, against real HTTP answers."""

from __future__ import annotations

import time

import pytest

from hugind.errors import BackendError, ExitCode
from hugind.llm import (
    BackendAuthError,
    BackendNotFoundError,
    BackendTimeoutError,
    BackendUnreachableError,
    ChatClient,
    ContextOverflowError,
    PermanentBackendError,
    RateLimitError,
    RetryPolicy,
    TransientBackendError,
    parse_retry_after,
)
from tests.support.chat_server import Drop, HttpError, Reply, free_port

MESSAGES = [{"role": "user", "content": "hi"}]


def _gap(server, i):
    """Seconds between the starts of request i and i+1, as the server saw them."""
    reqs = server.chat_requests
    return reqs[i + 1].started - reqs[i].started


def test_429_retry_after_is_honoured(server, client):
    server.push(HttpError(429, {"error": {"message": "slow down"}}, retry_after="1"), Reply("ok"))
    result = client.complete(MESSAGES)
    assert result.content == "ok" and result.attempts == 2
    assert _gap(server, 0) >= 0.95  # the server said 1 s; our own backoff alone would be ~10 ms


def test_503_fractional_retry_after_then_success(server, client):
    server.push(
        HttpError(503, {"error": {"message": "Loading model"}}, retry_after="0.3"),
        HttpError(503, {"error": {"message": "Loading model"}}, retry_after="0.3"),
        Reply("loaded"),
    )
    result = client.complete(MESSAGES)
    assert (result.content, result.attempts) == ("loaded", 3)
    assert _gap(server, 0) >= 0.28 and _gap(server, 1) >= 0.28


def test_retry_after_is_capped(server, make_client):
    policy = RetryPolicy(max_retries=2, base_delay=0.01, max_retry_after=0.2)
    server.push(HttpError(429, {}, retry_after="3600"), Reply("ok"))
    started = time.monotonic()
    assert make_client(retry=policy).complete(MESSAGES).content == "ok"
    assert time.monotonic() - started < 5


def test_total_wait_is_bounded(server, make_client):
    policy = RetryPolicy(max_retries=5, base_delay=0.01, max_total_wait=0.5)
    server.push(*[HttpError(429, {}, retry_after="0.4")] * 3)
    with pytest.raises(RateLimitError) as info:
        make_client(retry=policy).complete(MESSAGES)
    assert info.value.attempts == 2 and "gave up after 2 attempts" in str(info.value)


def test_5xx_exhausts_retries(server, client):
    server.push(*[HttpError(500, {"error": {"message": "boom"}})] * 4)
    with pytest.raises(TransientBackendError) as info:
        client.complete(MESSAGES)
    err = info.value
    assert err.status == 500 and err.attempts == 4 and len(server.chat_requests) == 4
    assert server.url in str(err) and "HTTP 500" in str(err) and "boom" in str(err)
    assert isinstance(err, BackendError) and err.exit_code == ExitCode.BACKEND


def test_dropped_connection_is_retried(server, client):
    server.push(Drop(), Reply("second time lucky"))
    assert client.complete(MESSAGES).content == "second time lucky"


def test_backend_down(make_client):
    port = free_port()
    client = make_client(f"http://127.0.0.1:{port}/v1", retry=RetryPolicy(max_retries=1, base_delay=0.01))
    started = time.monotonic()
    with pytest.raises(BackendUnreachableError) as info:
        client.complete(MESSAGES)
    assert f"127.0.0.1:{port}" in str(info.value) and "unreachable" in str(info.value)
    assert info.value.attempts == 2
    assert time.monotonic() - started < 5


def test_read_timeout_is_not_retried_by_default(server, make_client):
    server.push(Reply("late", delay=0.6), Reply("unused"))
    with pytest.raises(BackendTimeoutError, match="did not answer in time"):
        make_client(timeout=0.2).complete(MESSAGES)
    assert len(server.chat_requests) == 1


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors(server, make_client, status):
    server.push(HttpError(status, {"error": {"message": "Invalid API key", "type": "invalid_request_error"}}))
    with pytest.raises(BackendAuthError) as info:
        make_client(api_key="sk-very-secret").complete(MESSAGES)
    text = str(info.value)
    assert f"HTTP {status}" in text and server.url in text and "api_key_env" in text
    assert "sk-very-secret" not in text
    assert len(server.chat_requests) == 1  # never retried


def test_model_missing_lists_served_models(server, make_client):
    server.push(HttpError(404, {"error": "model 'qwen9' not found, try pulling it first"}))
    with pytest.raises(BackendNotFoundError) as info:
        make_client(model="qwen9").complete(MESSAGES)
    text = str(info.value)
    assert "model 'qwen9' is not available" in text and "test-model" in text and "HTTP 404" in text


def test_wrong_path_is_not_found(server):
    with (
        ChatClient(f"{server.base}/wrong", "m") as client,
        pytest.raises(BackendNotFoundError, match="OpenAI-compatible"),
    ):
        client.complete(MESSAGES)


@pytest.mark.parametrize(
    "body",
    [
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 9000,
                "n_ctx": 4096,
            }
        },
        {
            "object": "error",
            "message": "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens.",
            "type": "BadRequestError",
            "code": 400,
        },
    ],
)
def test_context_overflow(server, client, body):
    server.push(HttpError(400, body))
    with pytest.raises(ContextOverflowError) as info:
        client.complete(MESSAGES)
    assert "context window" in str(info.value) and "HTTP 400" in str(info.value)


def test_other_400_is_permanent(server, client):
    server.push(HttpError(400, {"error": {"message": "messages: field required"}}), Reply("unused"))
    with pytest.raises(PermanentBackendError, match="field required"):
        client.complete(MESSAGES)
    assert len(server.chat_requests) == 1


def test_quota_429_is_not_retried(server, client):
    server.push(HttpError(429, {"error": {"message": "You exceeded your quota", "type": "insufficient_quota"}}))
    with pytest.raises(PermanentBackendError, match="quota"):
        client.complete(MESSAGES)


def test_200_with_error_body(server, client):
    server.push(lambda req: HttpError(200, {"error": {"message": "model crashed", "code": 500}}), Reply("ok"))
    assert client.complete(MESSAGES).content == "ok"


def test_parse_retry_after_forms():
    assert parse_retry_after({"Retry-After": "3"}) == 3.0
    assert parse_retry_after({"retry-after-ms": "250"}) == 0.25
    assert parse_retry_after({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, now=1445412480 - 10) == 10.0
    assert parse_retry_after({"Retry-After": "soon"}) is None
    assert parse_retry_after({}) is None


def test_backoff_grows_and_is_jittered():
    policy = RetryPolicy(base_delay=1.0, max_delay=8.0, jitter=0.25)
    delays = [policy.delay(n, None) for n in (1, 2, 3, 4, 5)]
    assert 0.75 <= delays[0] <= 1.0 and 1.5 <= delays[1] <= 2.0 and 6.0 <= delays[4] <= 8.0
    assert policy.delay(1, 99.0) == 30.0
