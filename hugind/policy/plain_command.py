"""Commands that need no shell: ``ls -la src`` means exactly its words.

``run_command`` takes a ``sh -c`` string. For most strings agents send, the
shell only splits words and looks the program up in PATH, then forks once
more to run it (dash 0.5 does not exec the last command of ``-c``): a
second process per command, about 0.7 ms of CPU here. A string that is
plainly one simple command can be executed directly with the very argv
and environment the shell would have built, with nothing observable
changed but that extra process.

"Plainly" is decided on the characters, conservatively: only letters,
digits and ``_-./,:=+@%^``, separated by spaces or tabs. Nothing in that
alphabet is special to a POSIX shell (no quote, expansion, glob, tilde,
brace, comment, redirection, operator or newline), so splitting on blanks
is the shell's own word splitting. Anything else keeps the shell.
"""

from __future__ import annotations

import re

from hugind.policy.shell_parse import OPAQUE_KEYWORDS, PREFIX_KEYWORDS

# Every builtin of dash (the /bin/sh these machines run) and the reserved words the parser
# knows (and ``time``): the shell runs these itself, often differently from a program of that
# name (echo, printf, test, pwd, kill), so they keep the shell. ``true`` and ``false`` are not
# here: their only effect is their exit status, the same from the builtin and from the program.
_DASH_BUILTINS = (
    ". : [ alias bg break cd chdir command continue echo eval exec exit export fc fg getopts hash "
    "jobs kill local printf pwd read readonly return set shift test times trap type ulimit umask "
    "unalias unset wait"
)
SHELL_OWN_WORDS = frozenset(_DASH_BUILTINS.split()) | PREFIX_KEYWORDS | OPAQUE_KEYWORDS | {"time"}
_PLAIN = re.compile(r"[ \t]*[A-Za-z0-9_\-./,:=+@%^]+(?:[ \t]+[A-Za-z0-9_\-./,:=+@%^]+)*[ \t]*")


def plain_words(command: str) -> tuple[str, ...] | None:
    """The argv ``sh -c command`` would execute, when the shell is not needed to build it;
    None when it is (any shell syntax, an assignment, or a word the shell runs itself)."""
    if not _PLAIN.fullmatch(command):
        return None
    words = tuple(command.split())
    if "=" in words[0] or words[0] in SHELL_OWN_WORDS:
        return None
    return words
