"""Pytest fixtures over the loopback chat server (imported by package conftests)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from hugind.llm import ChatClient, RetryPolicy
from tests.support.chat_server import ChatServer

# Retries in tests wait milliseconds, not seconds.
FAST_RETRY = RetryPolicy(max_retries=3, base_delay=0.01, max_delay=0.05, max_total_wait=5.0)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as chat:
        yield chat


@pytest.fixture
def make_client(server: ChatServer) -> Iterator[Callable[..., ChatClient]]:
    clients: list[ChatClient] = []

    def make(url: str | None = None, model: str = "test-model", **kwargs: Any) -> ChatClient:
        kwargs.setdefault("retry", FAST_RETRY)
        kwargs.setdefault("timeout", 10.0)
        client = ChatClient(url or server.url, model, **kwargs)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


@pytest.fixture
def client(make_client: Callable[..., ChatClient]) -> ChatClient:
    return make_client()
