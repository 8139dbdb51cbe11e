#!/bin/sh
# Long Hypothesis run of every property in tests/fuzz (the `long` profile of tests/fuzz/profiles.py:
# 10x the examples of a normal test run; a failure prints its falsifying example).
cd "$(dirname "$0")/.." && HUGIND_FUZZ_PROFILE=long exec python -m pytest -q -p no:cacheprovider tests/fuzz "$@"
