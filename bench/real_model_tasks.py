"""Tasks for bench/real_model.sh: a real model, an `init --template agentic` agent, `hugind run`.

    python bench/real_model_tasks.py AGENT_DIR --backend NAME [--backend NAME ...] [--out DIR]

The agent folder is the template's, made by `hugind init --template agentic`;
this script writes its own notes into its notes/ folder. One-tool tasks run
that agent as the template made it (one tool, `read_note`); two-tool tasks run
a copy of it beside it (AGENT_DIR-two) with one tool added, `list_notes`. Each task is one `hugind run --json`
(HUGIND_TRACE=1); a task is completed when the run exits 0 and its final
answer contains one of the expected words. Transcripts (events and trace)
go to --out. Prints, per backend (one per tool format): tasks completed /
tried, for one-tool and two-tool tasks, and seconds per model turn.

The tasks differ on purpose from those in the project's tests (tests/):
other notes, other questions.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

NOTES = {
    "garden.md": "The tomatoes are planted along the south fence. The basil is in the blue pot.",
    "car.md": "The car is a green Skoda Octavia from 2014. Its next service is due in March.",
    "wifi.md": "The guest network is called Lighthouse and its password is orca-57.",
    "dentist.md": "The dentist appointment is on Thursday at 9:30 with Dr Okafor.",
    "books.md": "Currently reading: The Left Hand of Darkness. Next: Piranesi.",
    "bike.md": "The bicycle is a red Peugeot from 1998, kept in the cellar.",
    "recipes.md": "Pancakes: 200 g flour, 2 eggs, 300 ml milk, a pinch of salt.",
    "trip.md": "The summer trip goes to Tromso; the train leaves Oslo at 7:05.",
    "plants.md": "The fern needs water every Monday; the cactus once a month.",
    "passwords.md": "The locker combination at the gym is 4-1-8.",
}

LIST_NOTES_TOOL = """
// Added by bench/real_model_tasks.py for the two-tool tasks.
register_tool({
  name: "list_notes",
  description: "List the file names of all notes in the notes folder.",
  parameters: { type: "object", properties: {} },
  execute: () => JSON.parse(fs.list_dir("notes")).join("\\n"), // list_dir returns JSON text
});
"""


@dataclass(frozen=True)
class Task:
    question: str
    expect: tuple[str, ...]
    tools: int  # how many tools the task needs


TASKS = [
    Task("Where are the tomatoes planted? It is in garden.md.", ("south fence",), 1),
    Task("What colour is my car? See car.md.", ("green",), 1),
    Task("What is the guest wifi password? It is in wifi.md.", ("orca-57",), 1),
    Task("What time is my dentist appointment? Look in dentist.md.", ("9:30",), 1),
    Task("Which book am I reading now? The note is books.md.", ("left hand of darkness",), 1),
    Task("How much milk goes into the pancakes? Check recipes.md.", ("300",), 1),
    Task("Where does the summer trip go? It is in trip.md.", ("tromso", "tromsø"), 1),
    Task("How often does the cactus need water? See plants.md.", ("month",), 1),
    Task("What is my gym locker combination? It is in passwords.md.", ("4-1-8", "418"), 1),
    Task("When is the car's next service due? Read car.md.", ("march",), 1),
    Task("Which of my notes is about my bicycle, and what colour is the bicycle?", ("red",), 2),
    Task("One of my notes has the wifi details. What is the guest network called?", ("lighthouse",), 2),
    Task("Find the note about the dentist and tell me the doctor's name.", ("okafor",), 2),
    Task("Which note has the pancake recipe, and how many eggs does it need?", ("2", "two"), 2),
]


def prepare(agent: Path) -> dict[int, Path]:
    """The agent for each number of tools: the template's, and a copy with `list_notes`."""
    notes = agent / "notes"
    notes.mkdir(exist_ok=True)
    for name, text in NOTES.items():
        (notes / name).write_text(text + "\n", encoding="utf-8")
    two = agent.with_name(agent.name + "-two")
    shutil.rmtree(two, ignore_errors=True)
    shutil.copytree(agent, two)
    main = two / "main.js"
    main.write_text(main.read_text(encoding="utf-8") + LIST_NOTES_TOOL, encoding="utf-8")
    return {1: agent, 2: two}


@dataclass
class Outcome:
    ok: bool
    exit_code: int
    answer: str
    turns: int
    model_seconds: float


def run_task(agent: Path, backend: str, task: Task, log: Path) -> Outcome:
    env = {**os.environ, "HUGIND_TRACE": "1"}
    cmd = [sys.executable, "-m", "hugind", "run", str(agent), "--backend", backend, "--json", "--", task.question]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900)
    log.write_text(f"$ {' '.join(cmd)}\nexit {proc.returncode}\n--- events\n{proc.stdout}--- trace\n{proc.stderr}")
    answer, turns, seconds = "", 0, 0.0
    for line in proc.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "llm_response":
            turns += 1
            seconds += float(event.get("elapsed_s") or 0.0)
        elif event.get("type") == "final":
            answer = str(event.get("text") or "")
    ok = proc.returncode == 0 and any(word in answer.lower() for word in task.expect)
    return Outcome(ok, proc.returncode, answer, turns, seconds)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("agent", type=Path)
    parser.add_argument("--backend", action="append", required=True, help="a backend name from config.yaml")
    parser.add_argument("--out", type=Path, default=Path("real-model-transcripts"))
    parser.add_argument("--only", type=int, default=0, help="run only the first N tasks")
    parser.add_argument("--task", type=int, action="append", default=[], help="run task N (1-based); repeatable")
    args = parser.parse_args()
    agents = prepare(args.agent)
    args.out.mkdir(parents=True, exist_ok=True)
    numbered = list(enumerate(TASKS, 1))
    if args.task:
        numbered = [(i, t) for i, t in numbered if i in args.task]
    elif args.only:
        numbered = numbered[: args.only]
    for backend in args.backend:
        done = {1: 0, 2: 0}
        tried = {1: 0, 2: 0}
        turns, seconds = 0, 0.0
        started = time.monotonic()
        for i, task in numbered:
            result = run_task(agents[task.tools], backend, task, args.out / f"{backend}-{i:02d}.log")
            tried[task.tools] += 1
            done[task.tools] += result.ok
            turns += result.turns
            seconds += result.model_seconds
            mark = "ok  " if result.ok else "FAIL"
            print(
                f"{backend:>8} {mark} task {i:2d} exit {result.exit_code:3d} {result.turns} turn(s): "
                f"{json.dumps(result.answer[:100], ensure_ascii=False)}",
                flush=True,
            )
        per_turn = seconds / turns if turns else 0.0
        print(
            f"{backend}: one-tool {done[1]}/{tried[1]}, two-tool {done[2]}/{tried[2]}, "
            f"all {done[1] + done[2]}/{tried[1] + tried[2]}; {turns} turns, {per_turn:.2f} s per turn "
            f"(model time), {time.monotonic() - started:.0f} s in all",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
