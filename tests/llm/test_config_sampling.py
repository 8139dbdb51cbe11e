"""Sampling options and tool_format in config.yaml; the agent's sampling inside the user's."""

from __future__ import annotations

import pytest
import yaml

from hugind.llm import BackendConfigError, resolve_backend
from hugind.llm.sampling import SamplingRules
from tests.support.chat_server import ChatServer, Reply


@pytest.fixture
def config(tmp_path):
    def write(backends):
        path = tmp_path / "config.yaml"
        path.write_text(yaml.safe_dump({"backends": backends}))
        return path

    return write


def test_sampling_and_tool_format_are_read_and_unset_ones_stay_unset(config):
    path = config(
        {
            "a": {"url": "http://127.0.0.1:9/v1", "max_tokens": 256, "stop": "END", "tool_format": "text"},
            "b": {"url": "http://127.0.0.1:9/v1"},
        }
    )
    a = resolve_backend("a", config_path=path)
    assert dict(a.sampling) == {"max_tokens": 256, "stop": ["END"]} and a.tool_format == "text"
    b = resolve_backend("b", config_path=path)
    assert dict(b.sampling) == {} and b.tool_format is None


def test_the_agents_options_reach_every_fallback_under_its_own_users(config):
    path = config(
        {
            "a": {"url": "http://127.0.0.1:9/v1", "max_tokens": 10, "fallbacks": ["b"]},
            "b": {"url": "http://127.0.0.1:8/v1", "max_tokens": 500},
        }
    )
    primary = resolve_backend("a", config_path=path).for_agent({"max_tokens": 100})
    bodies = []
    for cfg in (primary, *primary.fallbacks):
        body: dict = {}
        SamplingRules(cfg.sampling, cfg.agent_sampling).apply(body)
        bodies.append(body)
    assert bodies == [{"max_tokens": 10}, {"max_tokens": 100}]


@pytest.mark.parametrize(
    "spec",
    [
        {"url": "http://127.0.0.1:9/v1", "temperature": 0.5},
        {"url": "http://127.0.0.1:9/v1", "fallbacks": [{"url": "http://127.0.0.1:8/v1", "seed": 1}]},
    ],
)
def test_an_agent_written_mapping_cannot_set_sampling(config, spec):
    with pytest.raises(BackendConfigError, match=r"agent\.yaml's 'sampling'"):
        resolve_backend(spec, config_path=config({}))


def test_a_user_inline_fallback_may_set_sampling(config):
    path = config({"a": {"url": "http://127.0.0.1:9/v1", "fallbacks": [{"url": "http://127.0.0.1:8/v1", "seed": 4}]}})
    assert dict(resolve_backend("a", config_path=path).fallbacks[0].sampling) == {"seed": 4}


def test_client_sends_the_options_and_clamps_the_callers(config):
    with ChatServer([Reply("one"), Reply("two")]) as server:
        path = config({"s": {"url": server.url, "max_tokens": 30, "top_p": 0.5}})
        cfg = resolve_backend("s", config_path=path).for_agent({"temperature": 0.3, "max_tokens": 20})
        with cfg.make_client() as client:
            client.complete([{"role": "user", "content": "hi"}])
            client.complete([{"role": "user", "content": "hi"}], extra={"max_tokens": 1000, "top_p": 1.0})
        first, second = (r.body for r in server.chat_requests)
    assert (first["max_tokens"], first["temperature"], first["top_p"]) == (20, 0.3, 0.5)
    assert (second["max_tokens"], second["temperature"], second["top_p"]) == (30, 0.3, 0.5)
