"""What saving the conversation after every turn costs an agentic run, in one run.

Runs the real loop (real HTTP to the loopback chat server, a Python tool whose
result is ``--result-kb`` KiB) for N tool turns plus the final answer, three
ways, rounds interleaved so machine noise hits all alike:

* ``plain``: a ChatClient, no checkpoint (what a run did before);
* ``saved``: the same with the session hook: ``state.json`` rewritten
  atomically (temp file, fsync, rename, directory fsync) after every turn;
* ``chain``: a FallbackClient over the same server (no switch happens), no
  checkpoint: the cost of the wrapper alone.

Prints the median per-turn time of each and its ratio to ``plain``; absolute
times depend on the machine and its disk (fsync), the ratios are the result.

    python bench/session_overhead.py [--turns 30] [--rounds 5] [--result-kb 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from hugind.agentic import FunctionExecutor, ToolSpec, run_agentic_loop  # noqa: E402
from hugind.llm import BackendConfig  # noqa: E402
from hugind.llm.fallback import FallbackClient, chain_of  # noqa: E402
from hugind.sessions.plan import SessionPlan  # noqa: E402
from hugind.sessions.store import SessionStore  # noqa: E402
from tests.support.chat_server import ChatServer, RecordedRequest, Reply  # noqa: E402

ECHO = ToolSpec("echo", "Echo.", {"type": "object", "properties": {"text": {"type": "string"}}})


def scripted(turns: int):
    def step(request: RecordedRequest) -> Reply:
        done = sum(1 for m in request.messages if m.get("role") == "assistant")
        if done < turns:
            return Reply(f'<tool_call>{{"name": "echo", "args": {{"text": "turn {done}"}}}}</tool_call>')
        return Reply(f"All {turns} turns done.")

    return step


def one_run(kind: str, url: str, turns: int, result: str, home: Path, n: int) -> float:
    config = BackendConfig(url, "m", session_id="bench")
    client = FallbackClient(chain_of(config)) if kind == "chain" else config.make_client()
    hook = None
    if kind == "saved":
        plan = SessionPlan({"name": "bench"}, [], None, None, print, store=SessionStore(f"bench-{n}", home))
        hook = plan.record
    executor = FunctionExecutor({"echo": lambda args: result})
    started = time.perf_counter()
    out = run_agentic_loop(
        client,
        system_prompt="bench",
        user_prompt="go",
        tools=[ECHO],
        executor=executor,
        max_turns=turns + 1,
        checkpoint=hook,
    )
    elapsed = time.perf_counter() - started
    client.close()
    assert out.final_text == f"All {turns} turns done.", out.final_text
    return elapsed / out.turns


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--result-kb", type=int, default=4)
    opts = parser.parse_args()
    result = "r" * (opts.result_kb * 1024)
    kinds = ("plain", "saved", "chain")
    samples: dict[str, list[float]] = {k: [] for k in kinds}
    with tempfile.TemporaryDirectory() as home, ChatServer(default=scripted(opts.turns)) as server:
        n = 0
        for _ in range(opts.rounds):
            for kind in kinds:
                n += 1
                samples[kind].append(one_run(kind, server.url, opts.turns, result, Path(home), n))
        size = max(p.stat().st_size for p in Path(home).glob("*/state.json"))
    base = statistics.median(samples["plain"])
    print(f"{opts.turns} tool turns + final, {opts.result_kb} KiB per tool result, {opts.rounds} rounds")
    print(f"largest state.json: {size / 1024:.0f} KiB")
    for kind in kinds:
        med = statistics.median(samples[kind])
        print(f"{kind:6} {med * 1000:7.2f} ms/turn  ratio {med / base:5.2f}x plain")


if __name__ == "__main__":
    main()
