"""Agentic-loop overhead per turn, against a bare httpx POST loop, in one run.

Runs the real loop (real HTTP to the loopback chat server, real parsing,
dispatch to a Python tool) for N tool turns plus the final answer, and
reports per chat request: total time, the backend's own time (as measured
by the server), and the difference (the client side's overhead). Then it
replays the exact same request bodies with a bare ``httpx.Client.post`` loop
against the same server (for SSE: reading each line and decoding its JSON)
and reports the same numbers. The ratio of the two overheads says what the
loop adds on top of plain HTTP. Server and client share one Python process,
so both overheads include some GIL contention with the server's threads.

    python bench/loop_overhead.py [--turns 50] [--rounds 5] [--stream]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from hugind.agentic import FunctionExecutor, ToolSpec, run_agentic_loop  # noqa: E402
from hugind.llm import ChatClient  # noqa: E402
from tests.support.chat_server import ChatServer, RecordedRequest, Reply  # noqa: E402

ECHO = ToolSpec(
    "echo",
    "Echo the text back.",
    {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
)
FILLER = "Let me think about the next step carefully before calling the tool. " * 4


def scripted(turns: int):
    """A deterministic backend: the reply depends only on the conversation so far."""

    def step(request: RecordedRequest) -> Reply:
        done = sum(1 for m in request.messages if m.get("role") == "assistant")
        if done < turns:
            call = f'<tool_call>{{"name": "echo", "arguments": {{"text": "turn {done}"}}}}</tool_call>'
            return Reply(f"<think>{FILLER}</think>\n{call}", content_chunk=16)
        return Reply(f"<think>{FILLER}</think>All {turns} turns done.", content_chunk=16)

    return step


def settle(server: ChatServer) -> None:
    """Wait until the server has finished writing its last answer."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline and any(r.finished == 0.0 for r in server.chat_requests):
        time.sleep(0.001)


def run_loop(server: ChatServer, turns: int, stream: bool) -> tuple[float, float, int, list[Any]]:
    server.requests.clear()
    executor = FunctionExecutor({"echo": lambda args: args["text"]})
    with ChatClient(server.url, "bench-model") as client:
        started = time.perf_counter()
        result = run_agentic_loop(
            client,
            system_prompt="You are a benchmark agent.",
            user_prompt="Call echo until done.",
            tools=[ECHO],
            executor=executor,
            max_turns=turns + 1,
            stream=stream,
            trace=False,
        )
        total = time.perf_counter() - started
    settle(server)
    assert result.stop_reason == "done" and result.turns == turns + 1, result
    bodies = [r.body for r in server.chat_requests]
    return total, server.backend_seconds, len(bodies), bodies


def run_bare(server: ChatServer, bodies: list[Any]) -> tuple[float, float, int]:
    server.requests.clear()
    url = f"{server.url}/chat/completions"
    with httpx.Client(timeout=30) as http:
        started = time.perf_counter()
        for body in bodies:
            if body.get("stream"):
                # The least any streaming client does: read each SSE line and decode its JSON.
                with http.stream("POST", url, json=body) as resp:
                    for line in resp.iter_lines():
                        if line.startswith("data: {"):
                            json.loads(line[6:])
            else:
                http.post(url, json=body).json()
        total = time.perf_counter() - started
    settle(server)
    return total, server.backend_seconds, len(bodies)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, default=50, help="tool turns per loop run")
    parser.add_argument("--rounds", type=int, default=5, help="measured rounds (median reported)")
    parser.add_argument("--stream", action="store_true", help="use SSE streaming")
    args = parser.parse_args(argv)

    rounds: list[tuple[float, float, float, float]] = []  # loop total, backend, overhead; bare overhead
    with ChatServer(default=scripted(args.turns)) as server:
        _, _, _, bodies = run_loop(server, args.turns, args.stream)  # warm-up
        run_bare(server, bodies)
        for _ in range(args.rounds):
            total, backend, calls, bodies = run_loop(server, args.turns, args.stream)
            b_total, b_backend, b_calls = run_bare(server, bodies)
            rounds.append(
                (
                    total / calls * 1000,
                    backend / calls * 1000,
                    (total - backend) / calls * 1000,
                    (b_total - b_backend) / b_calls * 1000,
                )
            )

    ratios = sorted(r[2] / r[3] for r in rounds)
    total_ms, backend_ms, loop_over, bare_over = sorted(rounds, key=lambda r: r[2] / r[3])[len(rounds) // 2]
    mode = "SSE streaming" if args.stream else "JSON"
    print(f"loop overhead ({mode}; {args.turns} tool turns + final answer; median of {args.rounds} rounds)")
    print(f"  loop : {total_ms:7.3f} ms/turn total, {backend_ms:7.3f} ms backend, {loop_over:7.3f} ms overhead")
    print(f"  bare : {bare_over:7.3f} ms/request overhead (httpx POST of the same bodies)")
    print(f"  loop's own cost per turn (loop - bare overhead): {loop_over - bare_over:7.3f} ms")
    print(f"  ratio loop/bare overhead: {loop_over / bare_over:5.2f}x (range {ratios[0]:.2f}-{ratios[-1]:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
