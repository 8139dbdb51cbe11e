"""Hypothesis profiles for the property suites in ``tests/fuzz``.

``ci`` (default) keeps every property file fast enough for each test run;
``long`` is for a deliberate fuzzing session::

    HUGIND_FUZZ_PROFILE=long python -m pytest -q -p no:cacheprovider tests/fuzz

This is the only place the profiles are defined; ``tests/fuzz/conftest.py``
imports it, so property files that only use ``@given`` get the same profile.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE_ENV = "HUGIND_FUZZ_PROFILE"

# No example database: nothing is written into the worktree, and a failure is
# reproduced from the printed falsifying example (plus @example regressions).
# ci is derandomized: the suite that gates a merge tries the same cases every time,
# so it never turns red on a find it did not cause; hunting new cases is the long
# profile's job (bench/fuzz.sh), which stays random.
settings.register_profile(
    "ci",
    max_examples=100,
    deadline=None,
    database=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# bench/mutation.py: the same derandomized cases, a tenth of them, once per mutant.
settings.register_profile(
    "mutation",
    max_examples=10,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
settings.register_profile(
    "long",
    max_examples=1000,
    deadline=None,
    database=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

PROFILE: str = os.environ.get(PROFILE_ENV, "ci")
settings.load_profile(PROFILE)


def scaled(ci_examples: int) -> int:
    """``max_examples`` for a property that is costlier (or cheaper) than average.

    The ci count is taken as given; the long profile multiplies it by the same
    factor as the default (100 -> 1000), so relative weights are kept."""
    factor = settings.get_profile(PROFILE).max_examples / 100
    return max(1, int(ci_examples * factor))
