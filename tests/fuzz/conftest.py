"""Hypothesis profiles for every property file here: one definition, in ``profiles.py``.

Importing it registers ``ci`` (default) and ``long`` and loads the one named
by ``HUGIND_FUZZ_PROFILE``, so files that only use ``@given`` get it too.
"""

from __future__ import annotations

import tests.fuzz.profiles  # noqa: F401  (registers and loads the profile)
