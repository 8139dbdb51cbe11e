"""Hypothesis profiles for the property tests in this folder.

Every property file here just uses ``@given`` (no ``@settings`` needed); how
hard it searches is chosen for the whole run by ``HUGIND_FUZZ_PROFILE``:

* ``ci`` (the default): ~150 examples per property, the normal test suite;
* ``long``: 10,000 examples per property, for hunting (``bench/fuzz.sh``);
  failures are kept in ``.hypothesis/`` and replayed first next time.

``deadline=None`` in both: the machine is shared, and a slow example is not
a failure here (hangs are caught by the tests' own timeouts).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE_ENV = "HUGIND_FUZZ_PROFILE"

settings.register_profile(
    "ci",
    max_examples=150,
    deadline=None,
    database=None,  # nothing written into the work tree by an ordinary test run
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long",
    max_examples=10_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get(PROFILE_ENV, "ci"))
