"""web-platform-tests cases for Blob/File, structuredClone, AbortController/
AbortSignal, EventTarget/Event, timers and performance, with node as the reference.

Each suite is a runner of ours (web_globals/wpt_<suite>.mjs and any
wpt_<suite>.<part>.mjs, on the small case runner wpt_steps.mjs) applying
WPT's vectors and case names (wpt/<suite>.json, taken from WPT with its
licence) the way the WPT tests assert them. It runs under node and under
`hugind run`; hugind must pass every case node passes, except the few listed
in KNOWN with the reason. `python tests/runtime/test_web_wpt_objects.py [-v]`
prints the pass rate per suite.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import pytest

from tests.runtime.test_web_globals import needs_node
from tests.runtime.test_web_wpt import rates, run_both

SCRIPTS = Path(__file__).parent / "web_globals"
WPT = SCRIPTS / "wpt"

# suite -> fewest cases node must pass for the comparison to mean something.
SUITES = {"abort": 30, "blob": 150, "events": 80, "performance": 4, "structured_clone": 100, "timers": 10}

# Cases node passes that hugind does not, each with why (none may go stale).
KNOWN: dict[str, str] = {
    "blob.Blob-stream.Reading Blob.stream() with BYOB reader": "streams.js has no byte streams, so no BYOB reader",
}


def source(suite: str) -> str:
    data = WPT / f"{suite}.json"
    # ensure_ascii keeps lone surrogates and controls intact through the file.
    table = json.dumps(json.loads(data.read_text()), ensure_ascii=True) if data.exists() else "null"
    harness = (SCRIPTS / "wpt_steps.mjs").read_text()
    # A suite's steps: wpt_<suite>.mjs, then its further parts wpt_<suite>.<part>.mjs.
    parts = [SCRIPTS / f"wpt_{suite}.mjs", *sorted(SCRIPTS.glob(f"wpt_{suite}.*.mjs"))]
    steps = "\n".join(p.read_text() for p in parts)
    return f"{harness}\nconst DATA = {table};\n{steps}\nawait runCases();\n"


@needs_node
@pytest.mark.parametrize("suite", sorted(SUITES))
def test_wpt_cases_node_passes_pass_in_hugind(tmp_path, suite):
    node, hugind = run_both(tmp_path, f"wpt_{suite}", source(suite))
    assert set(node) == set(hugind)
    assert all(case.startswith(f"{suite}.") for case in node)
    assert sum(r == "ok" for r in node.values()) >= SUITES[suite]
    failing = {case for case, r in node.items() if r == "ok" and hugind[case] != "ok"}
    known = {case for case in KNOWN if case.startswith(f"{suite}.")}
    assert failing - known == set()
    # A known failure that now passes (or that node no longer passes) is stale.
    assert known - failing == set()
    # Cases node cannot run at all (it would abort) must still pass in hugind.
    assert all(hugind[case] == "ok" for case, r in node.items() if r == "skipped")


def main() -> None:
    for suite in sorted(SUITES) if len(sys.argv) < 2 or sys.argv[1] == "-v" else [sys.argv[1]]:
        with tempfile.TemporaryDirectory() as tmp:
            node, hugind = run_both(Path(tmp), f"wpt_{suite}", source(suite))
        for name, (ok, total) in rates(node, hugind).items():
            print(f"{name:10} node passes {total}/{len(node)}, hugind {ok}/{total} {100 * ok / total:.2f}%")
        for case, r in node.items():
            if "-v" in sys.argv and r == "ok" and hugind[case] != "ok":
                print("FAIL", case, hugind[case])
            if "-v" in sys.argv and r != "ok":
                print("node", r, case)


if __name__ == "__main__":
    main()
