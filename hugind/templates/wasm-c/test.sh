#!/bin/sh
# Smoke test: rebuild agent.wasm from main.c, validate the manifest, then run
# under --strict (a run with any policy denial exits 3) and check the result.
# PYTHON and HUGIND override the commands.
set -eu
cd "$(dirname "$0")"
python=${PYTHON:-python}
hugind=${HUGIND:-hugind}
$python -m ziglang cc -target wasm32-wasi -mexec-model=reactor -O2 -s -I sdk main.c -o agent.wasm
$hugind check . >/dev/null
out=$($hugind run . --strict -- data/hello.txt)
case "$out" in
  *'"lines": 2'*) echo "ok: $out" ;;
  *) echo "test.sh: unexpected result: $out" >&2; exit 1 ;;
esac
