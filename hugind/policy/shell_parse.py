"""A tokenizer for POSIX ``sh -c`` strings that finds every simple command.

It splits on ``;``, ``&&``, ``||``, ``|``, ``&`` and newlines, descends into
``$(...)``, backticks (also inside double quotes), ``${...}`` words,
``<(...)``/``>(...)`` and ``( ... )`` subshells, removes quotes and
backslashes to compute each word's value, and sets redirection targets
aside. It does not execute or expand anything: a word whose value depends
on an expansion is marked non-literal.

What it cannot read with certainty raises :class:`Uncertain` (here-docs,
arithmetic, ``case``/``for``, function definitions, ``$'...'``); what no
shell would accept raises :class:`ShellSyntaxError`. When the reading is
ambiguous between shells (dash, bash), it errs towards finding more
commands, never fewer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_COMMAND_LENGTH = 64 * 1024
MAX_DEPTH = 16

_METACHARS = frozenset(" \t\n;&|<>()")
_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGN_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\+?=")

# Reserved words that may precede a command: skipped, the next word is the program.
PREFIX_KEYWORDS = frozenset({"!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until"})
# Reserved words whose grammar this parser does not follow.
OPAQUE_KEYWORDS = frozenset({"case", "esac", "for", "select", "in", "function", "[[", "]]", "coproc"})


class ShellSyntaxError(ValueError):
    """The string is not valid shell (no shell would run it as written)."""


class Uncertain(ValueError):
    """The string uses a construct this parser does not analyze."""


@dataclass(frozen=True)
class Word:
    text: str  # value after quote removal; expansions are kept as written
    literal: bool  # the shell passes exactly ``text`` (no expansion, glob, brace or tilde)
    quoted: bool  # some part was quoted or escaped
    raw: str  # the source text

    @property
    def assignment(self) -> str | None:
        """``NAME`` when this word is a ``NAME=value`` assignment."""
        match = _ASSIGN_RE.match(self.raw)
        return match.group(1) if match else None


@dataclass(frozen=True)
class Command:
    """One simple command: leading assignments, then program and arguments."""

    assignments: tuple[Word, ...]
    words: tuple[Word, ...]

    @property
    def program(self) -> Word | None:
        return self.words[0] if self.words else None


def parse(source: str) -> list[Command]:
    """Every simple command in ``source``, in order (nested ones first)."""
    if len(source) > MAX_COMMAND_LENGTH:
        raise ShellSyntaxError(f"command longer than {MAX_COMMAND_LENGTH} characters")
    if "\0" in source:
        raise ShellSyntaxError("command contains a NUL byte")
    parser = _Parser(source, 0)
    parser.parse_list(0, closer=None)
    return parser.commands


class _Parser:
    def __init__(self, src: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            raise Uncertain("nesting deeper than 16 levels")
        self.src = src
        self.n = len(src)
        self.depth = depth
        self.braces = 0  # ${ nesting inside this parser
        self.commands: list[Command] = []

    # --- lists and commands ---------------------------------------------------

    def parse_list(self, i: int, closer: str | None) -> int:
        """Read commands from ``i`` until the end (or the ``)`` closing a group)."""
        s, n = self.src, self.n
        words: list[Word] = []
        while True:
            i = self._skip_blanks(i)
            if i >= n:
                if closer is not None:
                    raise ShellSyntaxError("missing ')'")
                self._flush(words)
                return i
            c = s[i]
            if c == "#":
                end = s.find("\n", i)
                i = n if end < 0 else end
            elif c in "\n;&|":
                if s.startswith(";;", i) or s.startswith(";&", i):
                    raise Uncertain("a case statement")
                self._flush(words)
                words = []
                i += 2 if s[i : i + 2] in ("&&", "||", "|&") else 1
            elif c == ")":
                if closer != ")":
                    raise ShellSyntaxError("unbalanced ')'")
                self._flush(words)
                return i + 1
            elif c == "(":
                if words:
                    raise Uncertain("a function definition")
                i = self._nested(i + 1)
            elif c in "<>":
                if s.startswith("(", i + 1):
                    i = self._nested(i + 2)  # process substitution, an argument
                    words.append(Word("<(...)", False, True, "<(...)"))
                else:
                    i = self._redirect(i)
            else:
                start = i
                word, i = self._word(i)
                if word.raw.isdigit() and i < n and s[i] in "<>" and i > start:
                    continue  # an IO number such as the 2 of 2>&1
                if _is_keyword(word, OPAQUE_KEYWORDS) and all(_is_keyword(w, PREFIX_KEYWORDS) for w in words):
                    raise Uncertain(f"the '{word.text}' construct")
                words.append(word)

    def _nested(self, i: int) -> int:
        sub = _Parser(self.src, self.depth + 1)
        end = sub.parse_list(i, closer=")")
        self.commands.extend(sub.commands)
        return end

    def _flush(self, words: list[Word]) -> None:
        k = 0
        while k < len(words) and _is_keyword(words[k], PREFIX_KEYWORDS):
            k += 1
        if k < len(words) and _is_keyword(words[k], OPAQUE_KEYWORDS):
            raise Uncertain(f"the '{words[k].text}' construct")
        rest = words[k:]
        j = 0
        while j < len(rest) and rest[j].assignment is not None:
            j += 1
        if rest:
            self.commands.append(Command(tuple(rest[:j]), tuple(rest[j:])))

    def _skip_blanks(self, i: int) -> int:
        s, n = self.src, self.n
        while i < n:
            if s[i] in " \t":
                i += 1
            elif s.startswith("\\\n", i):
                i += 2
            else:
                break
        return i

    def _redirect(self, i: int) -> int:
        s = self.src
        if s.startswith("<<", i):
            raise Uncertain("a here-document")
        for op in (">>", ">|", ">&", "<&", "<>", ">", "<"):
            if s.startswith(op, i):
                i += len(op)
                break
        i = self._skip_blanks(i)
        if i >= self.n or s[i] in _METACHARS:
            raise ShellSyntaxError("missing redirection target")
        target, i = self._word(i)  # not a program, but may hold substitutions
        if target.text.startswith(("/dev/tcp/", "/dev/udp/")):
            raise Uncertain(f"a redirection to {target.text.split('/')[2]} (bash opens a socket)")
        if not target.literal and "dev" in target.raw:
            raise Uncertain(f"a redirection to a computed device path ({target.raw!r})")
        return i

    # --- words ----------------------------------------------------------------

    def _word(self, i: int) -> tuple[Word, int]:
        s, n = self.src, self.n
        start = i
        text: list[str] = []
        unquoted: list[str] = []
        literal, quoted = True, False
        while i < n:
            c = s[i]
            if c in _METACHARS:
                break
            if c == "\\":
                if i + 1 >= n:
                    text.append("\\")
                    i += 1
                elif s[i + 1] == "\n":
                    i += 2
                else:
                    text.append(s[i + 1])
                    quoted = True
                    i += 2
            elif c == "'":
                end = s.find("'", i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                text.append(s[i + 1 : end])
                quoted = True
                i = end + 1
            elif c == '"':
                i, lit = self._double(i + 1, text)
                literal = literal and lit
                quoted = True
            elif c == "`":
                i = self._backtick(i + 1, in_double=False)
                text.append("`...`")
                literal = False
            elif c == "$":
                i, lit = self._dollar(i, text, in_double=False)
                literal = literal and lit
            else:
                if c == "~" and i == start:
                    literal = False
                text.append(c)
                unquoted.append(c)
                i += 1
        bare = "".join(unquoted)
        if "*" in bare or "?" in bare or ("[" in bare and "]" in bare[bare.index("[") :]):
            literal = False  # a glob pattern
        if "{" in bare and "}" in bare and ("," in bare or ".." in bare):
            literal = False  # bash brace expansion
        return Word("".join(text), literal, quoted, s[start:i]), i

    def _double(self, i: int, text: list[str]) -> tuple[int, bool]:
        s, n = self.src, self.n
        literal = True
        while i < n:
            c = s[i]
            if c == '"':
                return i + 1, literal
            if c == "\\" and i + 1 < n and s[i + 1] in '$`"\\\n':
                if s[i + 1] != "\n":
                    text.append(s[i + 1])
                i += 2
            elif c == "$":
                i, lit = self._dollar(i, text, in_double=True)
                literal = literal and lit
            elif c == "`":
                i = self._backtick(i + 1, in_double=True)
                text.append("`...`")
                literal = False
            else:
                text.append(c)
                i += 1
        raise ShellSyntaxError("unterminated double quote")

    def _dollar(self, i: int, text: list[str], *, in_double: bool) -> tuple[int, bool]:
        s, n = self.src, self.n
        nxt = s[i + 1] if i + 1 < n else ""
        if s.startswith("$((", i):
            raise Uncertain("an arithmetic expansion $((...))")
        if nxt == "(":
            end = self._nested(i + 2)
        elif nxt == "{":
            end = self._braced(i + 2, in_double=in_double)
        elif nxt == "'":
            raise Uncertain("$'...' quoting")
        elif nxt == '"' and not in_double:
            # bash reads $"rm" as the (locale-translated) string rm, dash as $rm: keep
            # dash's text but mark the word as computed, so neither reading is trusted.
            text.append("$")
            return i + 1, False
        elif nxt.isdigit() or nxt in "@*#?-$!":
            end = i + 2
        elif nxt and (nxt.isalpha() or nxt == "_"):
            match = _NAME_RE.match(s, i + 1)
            end = match.end() if match else i + 2
        else:
            text.append("$")
            return i + 1, True
        text.append(s[i:end])
        return end, False

    def _braced(self, i: int, *, in_double: bool) -> int:
        """Skip a ``${...}`` body, descending into what it substitutes."""
        s, n = self.src, self.n
        sink: list[str] = []
        self.braces += 1
        if self.braces > MAX_DEPTH:
            raise Uncertain("'${' nested deeper than 16 levels")
        while i < n:
            c = s[i]
            if c == "}":
                self.braces -= 1
                return i + 1
            if c == "\\":
                i += 2
            elif c == "'" and in_double:
                # In "${x:-'...'}" dash takes the quotes literally and bash half-honours them
                # (they hide a '}' but not a $(...) inside): no single reading is safe.
                raise Uncertain("a single quote inside a double-quoted ${...}")
            elif c == "'":
                end = s.find("'", i + 1)
                if end < 0:
                    raise ShellSyntaxError("unterminated single quote")
                i = end + 1
            elif c == '"':
                i, _ = self._double(i + 1, sink)
            elif c == "`":
                i = self._backtick(i + 1, in_double=False)
            elif c == "$":
                i, _ = self._dollar(i, sink, in_double=in_double)
            else:
                i += 1
        raise ShellSyntaxError("unterminated '${'")

    def _backtick(self, i: int, *, in_double: bool) -> int:
        """Parse the command of a backquoted substitution starting after its '`'."""
        s, n = self.src, self.n
        escapable = '$`\\"' if in_double else "$`\\"
        body: list[str] = []
        while i < n:
            c = s[i]
            if c == "\\" and i + 1 < n:
                if s[i + 1] in escapable:
                    body.append(s[i + 1])
                else:
                    body.append(s[i : i + 2])
                i += 2
            elif c == "`":
                sub = _Parser("".join(body), self.depth + 1)
                sub.parse_list(0, closer=None)
                self.commands.extend(sub.commands)
                return i + 1
            else:
                body.append(c)
                i += 1
        raise ShellSyntaxError("unterminated backquote")


def _is_keyword(word: Word, words: frozenset[str]) -> bool:
    return word.literal and not word.quoted and word.text in words
