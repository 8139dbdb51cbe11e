"""Fixtures shared by the confinement tests."""

from __future__ import annotations

import pytest

from hugind.confine.probe import capabilities
from hugind.confine.zygotes import usable


@pytest.fixture(params=["bwrap", "launcher"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each zygote test twice: in bubblewrap, and in hugind's own launcher (no bwrap)."""
    if request.param == "launcher":
        monkeypatch.setenv("HUGIND_BWRAP", "none")
    else:
        monkeypatch.delenv("HUGIND_BWRAP", raising=False)
    caps = capabilities()
    if request.param == "bwrap" and caps.bwrap is None:
        pytest.skip(f"bubblewrap unavailable: {caps.bwrap_problem}")
    if not usable(caps):
        pytest.skip("this machine cannot hold a zygote (needs Landlock ABI 6 and every confinement layer)")
    return request.param
