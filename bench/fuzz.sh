#!/bin/sh
# Long Hypothesis run of every property in tests/fuzz (10,000 examples each; failures kept in .hypothesis/).
cd "$(dirname "$0")/.." && HUGIND_FUZZ_PROFILE=long exec python -m pytest -q -p no:cacheprovider tests/fuzz "$@"
