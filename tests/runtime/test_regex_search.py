"""Unanchored regexp searches start only where the pattern can match
(runtimes/js/fast_regex.c): at the input's start for `^`, where the first
character step accepts, and past a failed leading x+ run.

Two references for every pattern and input: the plain path in the same engine
(a sticky copy of the regexp tried at each position in turn, which QuickJS runs
without the prefix the fast path replaces: the leftmost match by definition),
and node. The patterns are chosen to sit on each rule's edges: anchors with and
without the m flag, case folding inside and outside Latin-1 (the Kelvin sign,
the long s), classes beyond the BMP, x+ with and without a back reference (the
run may not be skipped when the rest refers to the capture), bounded loops,
lookbehind, and patterns that match the empty string.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.runtime.helpers import run_captured

NODE = shutil.which("node")

PATTERNS = [
    ("^ab", ""),
    ("^ab", "g"),
    ("^ab", "gm"),
    ("^\\s*#+", "gm"),
    ("b", "g"),
    ("B", "gi"),
    ("k", "giu"),
    ("s", "giu"),
    ("\u00e9", "gi"),
    ("[a-z]+", "g"),
    ("([a-z]+)@([a-z]+)\\.org", "g"),
    ("([a-z]+)@", "gi"),
    ("([a-z]+?)@", "g"),
    ("(\\w+) \\1", "g"),
    ("(?<w>a+)b\\k<w>", "g"),
    ("([ab]+)c", "g"),
    ("a{1,2}b", "g"),
    ("[ab]{2}c", "g"),
    ("\\b\\d{4}-\\d{2}\\b", "g"),
    ("\\B[aeiou]\\w*", "gi"),
    ("\\b[aeiou]\\w*a\\b", "gi"),
    ("(?<=x)[a-z]+", "g"),
    ("[a-z]+(?<=ab)", "g"),
    ("[^a-z ]+", "g"),
    ("[\\u{1F600}-\\u{1F64F}]+", "gu"),
    ("\\u{1F600}", "gu"),
    ("[\\uD83D]", "g"),
    (".", "gu"),
    ("a|b", "g"),
    ("x*", "g"),
    ("", "g"),
    ("(a)|b", "g"),
    ("[\\u0100-\\uFFFF]+", "g"),
    ("[\\s\\S]", "g"),
    ("\\d+(?=px)", "g"),
]

INPUTS = [
    "",
    "ab abab\nab",
    "  ## title\n#x\n ### y",
    "foo@example.org bar@baz.org x@y.org abc@ a@b.org",
    "aab aaab abab aaba ba aa b",
    "the the cat cat dog",
    "KELVIN \u212a k K \u017f s S ss",
    "caf\u00e9 CAF\u00c9 \u00e9t\u00e9",
    "2024-02-29 x=42 1999-12-31 12345-67-89",
    "alpha beta umbrella idea area opera Ultra",
    "xabc yabc xab ab",
    "\U0001f600\U0001f601 a\U0001f64f\U0001f680 \ud83d b",
    "\u0101\u0102 abc \u4e2d\u6587 text",
    "12px 3em 45px",
    "ccabcbbcaac",
    "ab\u00e9cd@x ab\u4e2dcd@y \u00e9\u00e9@z",
]

PROGRAM = r"""
// Strings travel as their UTF-16 code units: a lone surrogate survives.
const units = (v) => (typeof v === "string" ? Array.from(v, (_, i) => v.charCodeAt(i)).join(" ") : v ?? null);
function allMatches(re, s) {
  const out = [];
  for (const m of s.matchAll(re)) out.push([m.index, ...m].map(units));
  return out;
}
function plainMatches(re, s) {
  // The leftmost match from each position, found with a sticky copy tried at
  // each position in turn; then on as String.prototype.matchAll goes on.
  const out = [];
  const sticky = new RegExp(re.source, re.flags.replace("g", "") + "y");
  const unicode = re.unicode || re.unicodeSets;
  let from = 0;
  while (from <= s.length) {
    let found = null;
    for (let p = from; p <= s.length; p++) {
      sticky.lastIndex = p;
      found = sticky.exec(s);
      if (found) break;
    }
    if (!found) break;
    out.push([found.index, ...found].map(units));
    let next = found.index + found[0].length;
    if (found[0].length === 0) {
      const cp = unicode ? s.codePointAt(next) : undefined;
      next += cp !== undefined && cp > 0xffff ? 2 : 1;
    }
    if (!re.global) break;
    from = next;
  }
  return out;
}
function run(patterns, inputs) {
  const fast = [], plain = [], single = [];
  for (const [source, flags] of patterns) {
    const re = new RegExp(source, flags.includes("g") ? flags : flags + "g");
    for (const s of inputs) {
      fast.push(allMatches(re, s));
      plain.push(plainMatches(re, s));
      const once = new RegExp(source, flags.replace("g", ""));
      single.push([once.test(s), s.search(once), units(s.replace(once, "<$&>"))]);
    }
  }
  return { fast, plain, single };
}
"""


def _agent_result(make_agent) -> dict:
    source = PROGRAM + f"export default () => run({json.dumps(PATTERNS)}, {json.dumps(INPUTS)});"
    return run_captured(make_agent({"main.js": source})).result.value


def test_fast_search_finds_what_the_plain_search_finds(make_agent):
    got = _agent_result(make_agent)
    assert len(got["fast"]) == len(PATTERNS) * len(INPUTS)
    mismatches = [
        (PATTERNS[i // len(INPUTS)], INPUTS[i % len(INPUTS)], fast, plain)
        for i, (fast, plain) in enumerate(zip(got["fast"], got["plain"], strict=True))
        if fast != plain
    ]
    assert mismatches == []
    assert sum(len(m) for m in got["fast"]) > 300  # the cases do match, often


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_fast_search_finds_what_node_finds(make_agent, tmp_path):
    got = _agent_result(make_agent)
    script = tmp_path / "regex.cjs"
    script.write_text(PROGRAM + f"console.log(JSON.stringify(run({json.dumps(PATTERNS)}, {json.dumps(INPUTS)})));\n")
    proc = subprocess.run([NODE, str(script)], capture_output=True, text=True, check=True, timeout=60)
    want = json.loads(proc.stdout)
    assert got["fast"] == want["fast"]
    assert got["single"] == want["single"]


def test_a_long_input_with_no_start_is_searched_to_its_end(make_agent):
    # A match only at the very end, after a megabyte the first step rejects,
    # and a leading x+ run that fills the input before failing.
    source = """
    export default () => {
      const filler = "-".repeat(1 << 20);
      const run = "a".repeat(1 << 16);
      return [(filler + "ab").search(/b/), (filler + "ab").search(/^ab/), /([a]+)c/.exec(run + "b"),
              /([a]+)b/.exec(run + "b").index, (run + "\\u4e2d" + "ab").search(/[a-b]+\\u4e2d/)];
    };
    """
    got = run_captured(make_agent({"main.js": source})).result.value
    assert got == [(1 << 20) + 1, -1, None, 0, 0]
