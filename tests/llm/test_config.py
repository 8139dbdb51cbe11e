"""resolve_backend: URLs, names from the config file, inline mappings, keys from env."""

from __future__ import annotations

import pytest
import yaml

from hugind.errors import ExitCode
from hugind.llm import BackendConfig, BackendConfigError, resolve_backend
from tests.support.chat_server import Reply

CONFIG = {
    "default_backend": "local",
    "backends": {
        "local": {"url": "http://127.0.0.1:8080", "model": "qwen3", "tool_format": "auto", "timeout": 30},
        "remote": {
            "url": "https://api.example.test/v1",
            "model": "big",
            "api_key_env": "TEST_REMOTE_KEY",
            "headers": {"X-Org": "${TEST_ORG}"},
            "max_retries": 1,
            "session_mode": "stateless",
        },
    },
}


@pytest.fixture
def home(tmp_path, monkeypatch):
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(CONFIG))
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path))
    return tmp_path


def test_url_spec_needs_no_config(tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path / "nothing-here"))
    cfg = resolve_backend("http://127.0.0.1:1234", model="m")
    assert (cfg.url, cfg.model, cfg.name, cfg.api_key) == ("http://127.0.0.1:1234/v1", "m", None, None)


def test_name_from_hugind_home(home):
    cfg = resolve_backend("local")
    assert (cfg.name, cfg.url, cfg.model, cfg.tool_format, cfg.timeout) == (
        "local",
        "http://127.0.0.1:8080/v1",
        "qwen3",
        "auto",
        30.0,
    )


def test_default_backend(home):
    assert resolve_backend(None).name == "local"


def test_api_key_from_env_and_header_expansion(home, monkeypatch):
    monkeypatch.setenv("TEST_REMOTE_KEY", "sk-hidden-value")
    monkeypatch.setenv("TEST_ORG", "acme")
    cfg = resolve_backend("remote")
    assert cfg.api_key == "sk-hidden-value"
    assert dict(cfg.headers) == {"X-Org": "acme"}
    assert (cfg.max_retries, cfg.session_mode) == (1, "stateless")
    assert "sk-hidden-value" not in repr(cfg) and "acme" not in repr(cfg)


def test_missing_key_env_is_a_clear_error(home, monkeypatch):
    monkeypatch.delenv("TEST_REMOTE_KEY", raising=False)
    monkeypatch.setenv("TEST_ORG", "acme")
    with pytest.raises(BackendConfigError, match="TEST_REMOTE_KEY") as info:
        resolve_backend("remote")
    assert info.value.exit_code == ExitCode.USAGE


def test_unknown_name_lists_known(home):
    with pytest.raises(BackendConfigError) as info:
        resolve_backend("nope")
    text = str(info.value)
    assert "unknown backend 'nope'" in text and "local, remote" in text and str(home) in text


def test_unknown_name_without_config_file(tmp_path):
    with pytest.raises(BackendConfigError, match="no config file"):
        resolve_backend("local", config_path=tmp_path / "missing.yaml")


def test_explicit_config_path(tmp_path):
    path = tmp_path / "custom.yaml"
    path.write_text(yaml.safe_dump({"backends": {"only": {"url": "http://127.0.0.1:9/v1"}}}))
    assert resolve_backend(None, config_path=path).name == "only"


def test_mapping_specs(home):
    assert resolve_backend({"url": "http://127.0.0.1:5/v1", "model": "x"}).model == "x"
    cfg = resolve_backend({"name": "local", "model": "other", "timeout": 5})
    assert (cfg.name, cfg.model, cfg.timeout, cfg.tool_format) == ("local", "other", 5.0, "auto")


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        ({"model": "m"}, "'url' is required"),
        ({"url": "http://h/v1", "tool_format": "xml"}, "tool_format"),
        ({"url": "http://h/v1", "timeout": -1}, "timeout"),
        ({"url": "http://h/v1", "colour": "red"}, "unknown setting"),
        ({"url": "ftp://h/v1"}, "http"),
        ({"url": "http://h/v1", "session_mode": "resume"}, "session_id"),
    ],
)
def test_invalid_entries(tmp_path, entry, needle):
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump({"backends": {"b": entry}}))
    with pytest.raises(BackendConfigError, match=needle):
        resolve_backend("b", config_path=path)


def test_broken_yaml(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("backends: [unclosed")
    with pytest.raises(BackendConfigError, match="cannot read config"):
        resolve_backend("b", config_path=path)


def test_config_makes_a_working_client(server, tmp_path, monkeypatch):
    monkeypatch.setenv("LOOP_KEY", "k-123")
    path = tmp_path / "c.yaml"
    path.write_text(
        yaml.safe_dump({"backends": {"loop": {"url": server.url, "model": "test-model", "api_key_env": "LOOP_KEY"}}})
    )
    cfg = resolve_backend("loop", config_path=path)
    assert isinstance(cfg, BackendConfig)
    server.push(Reply("configured"))
    with cfg.make_client() as client:
        assert client.complete([{"role": "user", "content": "x"}]).content == "configured"
    assert server.chat_requests[0].headers["authorization"] == "Bearer k-123"
