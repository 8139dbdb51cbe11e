"""``--model`` / ``HUGIND_MODEL``: a bare ``--backend URL`` sends no model (real services refuse
that), and the option puts one in every request, through the real CLI and a loopback chat server."""

from __future__ import annotations

import json

import pytest

from hugind.backends import preview_backend
from hugind.manifest import Manifest
from tests.conftest import run_cli
from tests.support.chat_server import ChatServer, Reply

ASKER = "export default async () => await ask_llm('hi');"


@pytest.fixture
def asker(tmp_path):
    path = tmp_path / "asker.js"
    path.write_text(ASKER)
    return path


def _models(asker, *args: str, env: dict[str, str] | None = None) -> list[object]:
    with ChatServer([Reply("hello")]) as server:
        res = run_cli("run", str(asker), "--backend", server.url, *args, env={"HUGIND_MODEL": "", **(env or {})})
        requests = server.chat_requests
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == "hello"
    return [r.body.get("model", "<absent>") for r in requests]


def test_a_bare_url_sends_no_model(asker):
    assert _models(asker) == ["<absent>"]


def test_model_option_is_sent(asker):
    assert _models(asker, "--model", "qwen3-8b") == ["qwen3-8b"]


def test_model_from_the_environment_is_sent(asker):
    assert _models(asker, env={"HUGIND_MODEL": "from-env"}) == ["from-env"]


def test_the_option_wins_over_the_environment(asker):
    assert _models(asker, "--model", "flag", env={"HUGIND_MODEL": "env"}) == ["flag"]


def test_model_overrides_a_named_backend_and_the_session_shows_it(tmp_path, monkeypatch):
    (tmp_path / "config.yaml").write_text("backends:\n  local:\n    url: http://127.0.0.1:9/v1\n    model: small\n")
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path))
    manifest = Manifest(name="a", entry_point="main.js")
    assert preview_backend(manifest, "local").model == "small"
    assert preview_backend(manifest, "local", "large").model == "large"
    script = tmp_path / "meta.js"
    script.write_text("export default (input) => input.meta.session.model;")
    res = run_cli("run", str(script), "--backend", "local", "--model", "large", env={"HUGIND_MODEL": ""})
    assert res.code == 0, res.stderr
    assert json.loads(res.stdout) == "large"
