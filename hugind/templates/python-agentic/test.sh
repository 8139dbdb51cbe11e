#!/bin/sh
# Smoke test: validate the manifest; with a backend (HUGIND_BACKEND, and
# HUGIND_MODEL if the server needs a model name), also run one question under
# --strict (a run with any policy denial exits 3). HUGIND overrides the command.
set -eu
cd "$(dirname "$0")"
hugind=${HUGIND:-hugind}
$hugind check . >/dev/null
if [ -z "${HUGIND_BACKEND:-}" ]; then
  echo "ok: manifest valid (set HUGIND_BACKEND=http://HOST:PORT/v1 to also ask a model)"
  exit 0
fi
out=$($hugind run . --strict -- "What is on my to-do list?")
[ -n "$out" ] || { echo "test.sh: empty answer" >&2; exit 1; }
echo "ok: $out"
