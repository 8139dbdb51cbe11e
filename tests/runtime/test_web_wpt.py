"""web-platform-tests data run through hugind's engine with node as the reference.

The URL data (tests/runtime/web_globals/wpt/*.json, vendored from WPT with its
licence) is run by web_globals/wpt_url.mjs under node and under `hugind run`;
only the cases node passes count, and hugind must pass every one of them.
`python tests/runtime/test_web_wpt.py` prints the pass rate per suite.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import Counter
from pathlib import Path

from tests.runtime.test_web_globals import _agent, _hugind, _node, needs_node

SCRIPTS = Path(__file__).parent / "web_globals"
WPT = SCRIPTS / "wpt"


def _url_source() -> str:
    data = {
        "urltestdata": json.loads((WPT / "urltestdata.json").read_text()),
        "setters": json.loads((WPT / "setters_tests.json").read_text()),
        "toascii": json.loads((WPT / "toascii.json").read_text()),
        "idna": json.loads((WPT / "IdnaTestV2.json").read_text()),
    }
    # ensure_ascii keeps lone surrogates and controls intact through the file.
    return (SCRIPTS / "wpt_url.mjs").read_text().replace("__DATA__", json.dumps(data, ensure_ascii=True))


def _outcomes(stdout: bytes) -> dict[str, str]:
    lines = stdout.decode().splitlines()
    assert lines and lines[-1] == "done", lines[-3:]
    rows = [line.rsplit(" ", 1) for line in lines[:-1]]
    return {case: result for case, result in rows}


def run_both(root: Path, name: str, source: str) -> tuple[dict[str, str], dict[str, str]]:
    script = root / "node" / f"{name}.mjs"
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(source)
    expected = _node(script)
    assert expected.returncode == 0, expected.stderr.decode()
    got = _hugind(_agent(root / "agent", source))
    assert got.returncode == 0, got.stderr.decode()
    return _outcomes(expected.stdout), _outcomes(got.stdout)


def rates(node: dict[str, str], hugind: dict[str, str]) -> dict[str, tuple[int, int]]:
    """Per suite: (cases hugind passes of those node passes, cases node passes)."""
    total: Counter[str] = Counter()
    passed: Counter[str] = Counter()
    for case, result in node.items():
        if result != "ok":
            continue
        suite = case.split(" ", 1)[0].split(".", 1)[0]
        total[suite] += 1
        passed[suite] += hugind.get(case) == "ok"
    return {suite: (passed[suite], total[suite]) for suite in sorted(total)}


@needs_node
def test_url_wpt_cases_node_passes_pass(tmp_path):
    node, hugind = run_both(tmp_path, "wpt_url", _url_source())
    assert set(node) == set(hugind)
    # The data is large and node passes nearly all of it: the comparison means something.
    assert sum(r == "ok" for r in node.values()) > 3000
    failing = sorted(case for case, r in node.items() if r == "ok" and hugind[case] != "ok")
    assert failing == []


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        node, hugind = run_both(Path(tmp), "wpt_url", _url_source())
    for suite, (ok, total) in rates(node, hugind).items():
        print(f"{suite:12} {ok}/{total} {100 * ok / total:.2f}%")
    for case, r in node.items():
        if r == "ok" and hugind[case] != "ok" and "-v" in sys.argv:
            print("FAIL", case)


if __name__ == "__main__":
    main()


# Hosts from issue #30 with what WHATWG URL (UTS #46 with its validity checks) makes of them.
ISSUE_HOSTS = {
    "example.com%80": None,  # %80 decodes to U+FFFD: disallowed
    "example.com%EF%BF%BD": None,
    "a\ufdd0b": None,  # noncharacter
    "a\uffffb": None,
    "a\u200db": None,  # ContextJ: ZWJ only after a virama
    "\u0915\u094d\u200d\u0937": "xn--11b2ezcw70k",
    "a\u200cb": None,  # ZWNJ only after a virama or between joining letters
    "\u0628\u200c\u0628": "xn--ngba799q",
    "\u064aa": None,  # Bidi rule: an RTL label holds no L
    "\u05d0\u0660\u0031": None,  # Bidi rule: not both AN and EN
    "\u064a1": "xn--1-yoc",
    "xn--a": None,  # decodes to U+0080, disallowed
    "xn--tešla": None,  # non-ASCII in an xn-- label
    "xn--1ug": None,  # decodes to a lone ZWNJ
    "xn--ZCA": "xn--zca",
    "\u0301x": None,  # starts with a combining mark
    "fa\u00df.de": "xn--fa-hia.de",  # nontransitional: ß is kept
    "\u03a3.com": "xn--4xa.com",  # no final-sigma rule
    "\u2488x": None,
    "ab--c": "ab--c",  # CheckHyphens=false
    "-x": "-x",
}


def test_hosts_named_in_the_issue(tmp_path):
    source = (
        f"const hosts = {json.dumps(ISSUE_HOSTS, ensure_ascii=True)};\n"
        "for (const h of Object.keys(hosts)) {\n"
        "  let r; try { r = new URL(`https://${h}/`).host; } catch (e) { r = e.name; }\n"
        "  console.log(JSON.stringify([h, r]));\n"
        "}\n"
    )
    got = _hugind(_agent(tmp_path / "agent", source))
    assert got.returncode == 0, got.stderr.decode()
    seen = dict(json.loads(line) for line in got.stdout.decode().splitlines())
    assert seen == {h: "TypeError" if v is None else v for h, v in ISSUE_HOSTS.items()}
