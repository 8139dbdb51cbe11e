"""The backend config file is parsed once and reused while a stat says it is unchanged."""

from __future__ import annotations

import os

import pytest
import yaml

from hugind.llm import BackendConfigError, resolve_backend
from hugind.llm import config as llm_config


def _write(path, model: str, *, mtime_ns: int | None = None) -> None:
    path.write_text(yaml.safe_dump({"backends": {"local": {"url": "http://127.0.0.1:8080", "model": model}}}))
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))


@pytest.fixture
def config_file(tmp_path, monkeypatch):
    monkeypatch.setenv("HUGIND_HOME", str(tmp_path))
    path = tmp_path / "config.yaml"
    _write(path, "first")
    return path


def test_a_second_run_does_not_parse_the_file_again(config_file, monkeypatch):
    assert resolve_backend("local").model == "first"
    parses = []
    real = llm_config.load_yaml
    monkeypatch.setattr(llm_config, "load_yaml", lambda text: parses.append(text) or real(text))
    assert resolve_backend("local").model == "first"
    assert parses == []


def test_an_edit_is_seen_even_of_the_same_size_and_mtime_second(config_file):
    first = config_file.stat()
    assert resolve_backend("local").model == "first"
    # Same length, same whole-second mtime: only the nanoseconds tell them apart.
    _write(config_file, "other", mtime_ns=first.st_mtime_ns + 1)
    assert resolve_backend("local").model == "other"


def test_a_replaced_file_is_seen(config_file, tmp_path):
    assert resolve_backend("local").model == "first"
    fresh = tmp_path / "new.yaml"
    _write(fresh, "third", mtime_ns=config_file.stat().st_mtime_ns)  # same size and mtime, another inode
    os.replace(fresh, config_file)
    assert resolve_backend("local").model == "third"


def test_a_removed_file_is_an_error_again(config_file):
    assert resolve_backend("local").model == "first"
    config_file.unlink()
    with pytest.raises(BackendConfigError, match="no config file"):
        resolve_backend("local")


def test_what_a_caller_changes_does_not_reach_the_next_run(config_file):
    backends, _ = llm_config._load(config_file, required=True)
    backends["local"]["model"] = "tampered"
    backends["local"]["url"] = "http://127.0.0.1:9"
    assert resolve_backend("local").model == "first"
