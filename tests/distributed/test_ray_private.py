"""A Ray instance hugind starts for one machine listens on loopback and reports nothing to anyone."""

from __future__ import annotations

import ipaddress
import os

import pytest

from hugind.distributed.connect import private_ray_env

pytestmark = pytest.mark.ray


def test_the_local_instance_listens_on_loopback_only(ray_address):
    host = ray_address.rpartition(":")[0].strip("[]")
    assert ipaddress.ip_address(host).is_loopback, ray_address
    assert os.environ.get("RAY_USAGE_STATS_ENABLED") == "0"


def test_the_users_own_ray_settings_win(monkeypatch):
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "1")
    monkeypatch.delenv("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", raising=False)
    private_ray_env(local=False)  # joining a cluster: its addresses are the cluster's business
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "1"
    assert "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER" not in os.environ
    monkeypatch.delenv("RAY_USAGE_STATS_ENABLED")
    private_ray_env(local=True)
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "0"
    assert os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] == "0"
