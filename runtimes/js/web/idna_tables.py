"""Print the Unicode tables at the top of idna.js (not run by the build).

    python runtimes/js/web/idna_tables.py > /tmp/tables.js

They come from the Unicode Character Database as the `idna` package (its
UTS #46 mapping table and ArabicShaping joining types) and Python's
`unicodedata` (general category, Bidi class, combining class) carry it. Each
table lists only what idna.js cannot compute from the engine's own Unicode
support: the mapping is NFKC plus lowercase except for MAP_FIX, and so on.
"""

from __future__ import annotations

import bisect
import json
import unicodedata as ud

import idna.idnadata
from idna.uts46data import uts46_replacements, uts46_starts, uts46_statuses

UNICODE = range(0x110000)


def status(cp: int) -> tuple[str, str | None]:
    i = bisect.bisect_right(uts46_starts, cp) - 1
    return chr(uts46_statuses[i]), uts46_replacements[i]


def char_class(cps: list[int]) -> str:
    """A regex character class body over code points, as ranges."""
    ranges: list[list[int]] = []
    for cp in sorted(cps):
        if ranges and cp <= ranges[-1][1] + 1:
            ranges[-1][1] = max(cp, ranges[-1][1])
        else:
            ranges.append([cp, cp])
    esc = lambda cp: f"\\u{{{cp:x}}}"  # noqa: E731
    return "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in ranges)


def lower_each(s: str) -> str:
    return "".join(c.lower() for c in s)


def computed_mapping(cp: int) -> str:
    """What idna.js's mapOne computes for a code point."""
    s = ud.normalize("NFKC", chr(cp))
    return ud.normalize("NFKC", lower_each(ud.normalize("NFKC", lower_each(s))))


def assigned(cp: int) -> bool:
    return ud.category(chr(cp)) != "Cn"


def main() -> None:
    cherokee = lambda cp: 0x13F8 <= cp <= 0x13FD or 0xAB70 <= cp <= 0xABBF  # noqa: E731
    fix = {
        f"{cp:x}": status(cp)[1]
        for cp in UNICODE
        if assigned(cp) and status(cp)[0] == "M" and computed_mapping(cp) != status(cp)[1] and not cherokee(cp)
    }
    by_category = ("Cc", "Co", "Cs", "Zl", "Zp", "Cf")
    noncharacter = lambda cp: (cp & 0xFFFE) == 0xFFFE or 0xFDD0 <= cp <= 0xFDEF  # noqa: E731
    more_disallowed = [
        cp
        for cp in range(0x80, 0x110000)
        if assigned(cp) and status(cp)[0] == "X" and not (ud.category(chr(cp)) in by_category or noncharacter(cp))
    ]
    valid = [cp for cp in UNICODE if status(cp)[0] in "VD" and assigned(cp)]
    bidi = {cp: ud.bidirectional(chr(cp)) for cp in valid}
    cat = lambda cp: ud.category(chr(cp))  # noqa: E731
    looks_neutral = lambda cp: cat(cp)[0] in "PSZ" or cat(cp) in ("Cc", "Cf")  # noqa: E731
    marks = ("Mn", "Me")
    l_not_by_category = [cp for cp in valid if bidi[cp] == "L" and (looks_neutral(cp) or cat(cp) in marks)]
    neutral = ("ES", "CS", "ET", "ON", "BN")
    neutral_not_by_category = [
        cp for cp in valid if bidi[cp] in neutral and not looks_neutral(cp) and cat(cp) not in marks
    ]
    joining = {
        kind: [cp for packed in ranges for cp in range(packed >> 32, packed & 0xFFFFFFFF)]
        for kind, ranges in idna.idnadata.joining_types.items()
    }
    print("const MAP_FIX = " + json.dumps(fix, ensure_ascii=True, separators=(",", ":")) + ";")
    print(f"const MORE_DISALLOWED = /[{char_class(more_disallowed)}]/u;")
    print(f"const RAL = /[{char_class([cp for cp in valid if bidi[cp] in ('R', 'AL')])}]/u;")
    print(f"const AN = /[{char_class([cp for cp in valid if bidi[cp] == 'AN'])}]/u;")
    print(f"const EN = /[{char_class([cp for cp in valid if bidi[cp] == 'EN'])}]/u;")
    print(f"const L_NOT_BY_CATEGORY = /[{char_class(l_not_by_category)}]/u;")
    print(f"const NEUTRAL_NOT_BY_CATEGORY = /[{char_class(neutral_not_by_category)}]/u;")
    print(f"const JOIN_LD = /[{char_class(joining['L'] + joining['D'])}]/u;")
    print(f"const JOIN_RD = /[{char_class(joining['R'] + joining['D'])}]/u;")
    print(f"const VIRAMA = /[{char_class([cp for cp in UNICODE if ud.combining(chr(cp)) == 9])}]/u;")


if __name__ == "__main__":
    main()
