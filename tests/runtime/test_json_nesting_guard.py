"""JSON.parse's nesting guard (runtimes/js/shim.c) counts opening brackets of
both kinds, each count stopping one past the limit, before it scans the text.
Mixed `[` and `{` at and just past the limit, and bracket-rich documents that
nest shallowly, must be judged as before the counts stopped early."""

from __future__ import annotations

import pytest

from tests.runtime.helpers import run_captured

DEEP = "RangeError: JSON.parse: the text nests deeper than 2000 levels"

PROGRAM = """
export default function () {
  const nest = (squares, braces) =>
    "[".repeat(squares) + '{"k":'.repeat(braces) + "0" + "}".repeat(braces) + "]".repeat(squares);
  const one = (text) => {
    try { JSON.parse(text); return "ok"; } catch (e) { return `${e.name}: ${e.message}`; }
  };
  const flat = JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ i, tags: [i, [i]] })));
  return [one(nest(SQUARES, BRACES)), one(flat), JSON.parse(flat).length];
}
"""


@pytest.mark.parametrize(
    ("squares", "braces", "verdict"),
    [(1000, 1000, "ok"), (1000, 1001, DEEP), (1001, 1000, DEEP), (0, 2000, "ok"), (2001, 0, DEEP), (3000, 3000, DEEP)],
)
def test_mixed_brackets_at_the_nesting_limit(make_agent, squares, braces, verdict):
    source = PROGRAM.replace("SQUARES", str(squares)).replace("BRACES", str(braces))
    agent = make_agent({"main.js": source})
    # The flat document has 15k opening brackets but nests three deep: it parses.
    assert run_captured(agent).result.value == [verdict, "ok", 5000]
