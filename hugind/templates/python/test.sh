#!/bin/sh
# Smoke test: validate the manifest, then run under --strict (a run with any
# policy denial exits 3) and check the result. HUGIND overrides the command.
set -eu
cd "$(dirname "$0")"
hugind=${HUGIND:-hugind}
$hugind check . >/dev/null
out=$($hugind run . --strict -- data/hello.txt)
case "$out" in
  *'"words": 12'*) echo "ok: $out" ;;
  *) echo "test.sh: unexpected result: $out" >&2; exit 1 ;;
esac
