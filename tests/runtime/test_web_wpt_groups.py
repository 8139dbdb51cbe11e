"""web-platform-tests cases for URLSearchParams, Encoding, Headers,
Request/Response and base64 (atob/btoa), run with node as the reference.

Each suite's data (case names and test vectors taken from WPT's test files,
no WPT code) is tests/runtime/web_globals/wpt/<suite>.json; the checks that
apply each case as the WPT test asserts it are web_globals/wpt_<suite>.mjs,
over the small harness in web_globals/wpt_harness.mjs. Both run under node and
under `hugind run`; every case node passes must pass in hugind, except the
few listed in KNOWN with their reason (the list must stay exact: a case that
starts passing fails the test until it is taken off). `python
tests/runtime/test_web_wpt_groups.py` prints the rate per suite (-v: the
failing cases).
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.runtime.test_web_globals import needs_node
from tests.runtime.test_web_wpt import SCRIPTS, WPT, rates, run_both


@dataclass(frozen=True)
class Suite:
    floor: int  # node passes at least this many cases: the comparison means something
    known: dict[str, str] = field(default_factory=dict)  # case -> why hugind fails it
    more: tuple[str, ...] = ()  # further runner files, after wpt_<suite>.mjs, in one script


SUITES: dict[str, Suite] = {
    "base64": Suite(floor=370),
    "encoding": Suite(floor=440),
    "headers": Suite(floor=95, more=("wpt_headers_record.mjs",)),
    "request_response": Suite(floor=200, more=("wpt_request_response_body.mjs", "wpt_request_response_stream.mjs")),
    "urlsearchparams": Suite(floor=180),
}


def source(name: str) -> str:
    data = json.loads((WPT / f"{name}.json").read_text())
    runner = (SCRIPTS / f"wpt_{name}.mjs").read_text()
    more = "".join((SCRIPTS / extra).read_text() for extra in SUITES[name].more)
    # ensure_ascii keeps lone surrogates and controls intact through the file.
    data_json = json.dumps(data, ensure_ascii=True)
    return (SCRIPTS / "wpt_harness.mjs").read_text() + runner.replace("__DATA__", data_json) + more


@needs_node
@pytest.mark.parametrize("name", sorted(SUITES))
def test_wpt_cases_node_passes_pass(tmp_path, name):
    suite = SUITES[name]
    node, hugind = run_both(tmp_path, f"wpt_{name}", source(name))
    assert set(node) == set(hugind)
    assert all(case.startswith(f"{name}.") for case in node)
    # Every case in the data has a check written for it.
    assert [c for c, r in node.items() if r == "nocheck"] == []
    passed = [case for case, r in node.items() if r == "ok"]
    assert len(passed) >= suite.floor
    failing = {case for case in passed if hugind[case] != "ok"}
    assert failing == set(suite.known)
    ok, total = rates(node, hugind)[name]
    assert ok / total >= 0.995


def main() -> None:
    for name in sorted(SUITES):
        with tempfile.TemporaryDirectory() as tmp:
            node, hugind = run_both(Path(tmp), f"wpt_{name}", source(name))
        node_fails = sum(r != "ok" for r in node.values())
        for suite, (ok, total) in rates(node, hugind).items():
            print(f"{suite:16} {ok}/{total} {100 * ok / total:.2f}%  (node fails {node_fails})")
        if "-v" in sys.argv:
            for case, r in node.items():
                if r == "ok" and hugind[case] != "ok":
                    print("  FAIL", case)


if __name__ == "__main__":
    main()
