"""Properties of the shell policy (``decide_shell``, ``decide_spawn``) and its parser.

Commands are generated from a small grammar that knows, for every string it
builds, which programs a real ``sh`` would run (its *truth*). That gives an
oracle independent of hugind's parser: the analysis must find every one of
them, a blacklisted one must be denied however it is spelled or wrapped, and
a command allowed under a whitelist may only run listed programs. Programs
are real files on this machine (``/usr/bin/rm`` ...), resolved as in a run.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from hugind.policy.model import Denied, ShellPolicy
from hugind.policy.shell import SAFE_PATH, ShellPlan, SpawnPlan, decide_shell, decide_spawn, resolve_program
from hugind.policy.shell_parse import Command, ShellSyntaxError, Uncertain, parse
from tests.fuzz.profiles import scaled

CWD = Path(os.path.realpath("/"))  # relative program paths resolve against it (and are refused under lists)

# Programs the grammar runs; all exist in the safe PATH on the test machines (checked below).
PLAIN = ("cat", "ls", "echo", "id", "head", "true", "printf", "rm")
WRAPPER_NAMES = ("env", "nice", "timeout", "nohup", "stdbuf", "setsid", "time", "xargs", "sh", "bash", "find")
BUILTIN_WRAPPERS = ("command", "exec", "eval")  # looked through, but denied under a whitelist
UNIVERSE = PLAIN + WRAPPER_NAMES

# Directory spellings of /usr/bin (on merged-/usr systems /bin is /usr/bin).
DIR_SPELLINGS = (
    "/usr/bin/",
    "/bin/",
    "/usr/bin/../bin/",
    "/bin/./",
    "//usr//bin/",
    "/usr/local/../bin/",
    "/usr/./bin/",
)
NOISE_ARG = st.one_of(
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-/", min_size=1, max_size=8).filter(
        lambda t: not t.startswith("-")
    ),
    # Quoted arguments may hold any non-control text (homoglyphs only ever appear in arguments).
    st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=8)
    .filter(lambda t: "'" not in t)
    .map(lambda t: f"'{t}'"),
)
REDIRECTS = ("", " >/dev/null", " 2>&1", " </dev/null", " >>out.txt 2>&1")


def _available() -> None:
    missing = [name for name in (*UNIVERSE, "dash") if resolve_program(name, CWD) is None]
    if missing:
        pytest.skip(f"programs missing from {SAFE_PATH}: {missing}", allow_module_level=True)


_available()


# --- strategies: (shell text, programs it runs) -------------------------------------


@st.composite
def quoted(draw: st.DrawFn, text: str) -> str:
    """``text`` as one shell word with random quoting: 'r'm, "rm", \\rm, r"m" ..."""
    out: list[str] = []
    i = 0
    while i < len(text):
        size = draw(st.integers(1, max(1, len(text) - i)))
        chunk = text[i : i + size]
        i += size
        style = draw(st.sampled_from(("raw", "raw", "single", "double", "backslash", "bash-locale")))
        if style == "single":
            out.append(f"'{chunk}'")
        elif style == "double":
            out.append(f'"{chunk}"')
        elif style == "backslash":
            out.append("".join("\\" + c for c in chunk))
        elif style == "bash-locale":
            out.append(f'$"{chunk}"')  # bash reads $"rm" as rm (a locale-translated string)
        else:
            out.append(chunk)
    return "".join(out)


@st.composite
def spelled(draw: st.DrawFn, name: str, *, path: bool = True) -> str:
    """A spelling of program ``name``: bare or an absolute path with redundant parts, quoted at random."""
    text = name
    if path and draw(st.booleans()):
        text = draw(st.sampled_from(DIR_SPELLINGS)) + name
    return draw(quoted(text)) if draw(st.booleans()) else text


Built = tuple[str, frozenset[str]]


@st.composite
def invocation(draw: st.DrawFn, names: tuple[str, ...], wraps: int = 2) -> Built:
    """Words only (no separators): maybe-wrapped ``program args``."""
    name = draw(st.sampled_from(names))
    words = [draw(spelled(name)), *draw(st.lists(NOISE_ARG, max_size=3))]
    text, truth = " ".join(words), {name}
    for _ in range(draw(st.integers(0, wraps))):
        text, truth = draw(wrapped(text, frozenset(truth)))
    return text, frozenset(truth)


WRAP_OPTIONS: dict[str, tuple[str, ...]] = {
    "env": ("", "-i", "A=1", "-i B=2", "-u X", "--", "-"),
    "nice": ("", "-n 5", "-5", "--adjustment=3"),
    "timeout": ("5", "-s KILL 5", "--preserve-status 1m", "-k 1 5"),
    "nohup": ("",),
    "stdbuf": ("-o0", "-oL -e0", "--output=L"),
    "setsid": ("", "-f", "--wait"),
    "time": ("", "-p"),
    "xargs": ("", "-0", "-n 1", "-r"),
    "command": ("",),
    "exec": ("",),
}


@st.composite
def wrapped(draw: st.DrawFn, inner: str, truth: frozenset[str]) -> Built:
    kind = draw(st.sampled_from((*WRAP_OPTIONS, "sh", "bash", "eval", "find")))
    if kind in ("sh", "bash"):
        flag = draw(st.sampled_from(("-c", "-ec", "-e -c", "-xc")))
        return f"{draw(spelled(kind))} {flag} {shlex.quote(inner)}", truth | {kind}
    if kind == "eval":
        return f"{draw(spelled(kind, path=False))} {shlex.quote(inner)}", truth | {kind}
    if kind == "find":
        action = draw(st.sampled_from(("-exec", "-execdir", "-ok")))
        end = draw(st.sampled_from(("\\;", "';'", "+")))
        return f"{draw(spelled(kind))} . -name x {action} {inner} {{}} {end}", truth | {kind}
    options = draw(st.sampled_from(WRAP_OPTIONS[kind]))
    program = draw(spelled(kind, path=kind not in ("command", "exec")))
    return " ".join(p for p in (program, options, inner) if p), truth | {kind}


def _backquote(text: str) -> str:
    # Inside `...` the shell removes one level of \\, \` and \$ before parsing the body.
    return "`" + text.replace("\\", "\\\\").replace("`", "\\`").replace("$", "\\$") + "`"


@st.composite
def command_list(draw: st.DrawFn, names: tuple[str, ...], depth: int = 3) -> Built:
    kind = draw(st.sampled_from(("simple", "simple", "seq", "group", "subst", "control") if depth else ("simple",)))
    if kind == "simple":
        text, truth = draw(invocation(names))
        prefix = draw(st.sampled_from(("", "", "A=1 ", "FOO=bar B=2 ", ">/dev/null ")))
        return prefix + text + draw(st.sampled_from(REDIRECTS)), truth
    a, ta = draw(command_list(names, depth - 1))
    if kind == "seq":
        b, tb = draw(command_list(names, depth - 1))
        sep = draw(st.sampled_from((";", " ; ", " && ", " || ", " | ", " & ", "\n", " |& ")))
        return a + sep + b, ta | tb
    if kind == "group":
        form = draw(st.sampled_from(("( {} )", "({})", "{{ {}; }}", "{{ {}\n}}")))
        return form.format(a), ta
    if kind == "subst":
        form = draw(
            st.sampled_from(
                (
                    "echo $({})",
                    'echo "$({})"',
                    "echo x$( {} )y",
                    "cat <({})",
                    "cat >({})",
                    "echo ${{X:-$({})}}",
                    'echo "${{X:-$({})}}"',
                    'echo ${{X:+"$({})"}}',
                    "echo \"${{X:-'$({})'}}\"",  # dash: the quotes are literal; bash still runs it
                    'echo "${{X#$({})}}"',
                    "BACKQUOTE",
                )
            )
        )
        text = f"echo {_backquote(a)}" if form == "BACKQUOTE" else form.format(a)
        return text, ta | {form.split()[0] if form != "BACKQUOTE" else "echo"}
    b, tb = draw(command_list(names, depth - 1))
    form = draw(
        st.sampled_from(
            (
                "if {}; then {}; fi",
                "while {}; do {}; done",
                "until {}\ndo {}\ndone",
                "! {} && {}",
                "if ! {}; then :; else {}; fi",
            )
        )
    )
    extra = {":"} if ":" in form else set()
    return form.format(a, b), ta | tb | extra


def _found(plan: ShellPlan | SpawnPlan) -> set[str]:
    """Every name the analysis found: as written and as resolved."""
    names: set[str] = set()
    for program in plan.programs:
        names.add(os.path.basename(program.name))
        if program.path:
            names.add(os.path.basename(os.path.realpath(program.path)))
    return names


def _outcome(call: Callable[[], ShellPlan | SpawnPlan]) -> tuple[str, ...]:
    try:
        plan = call()
    except Denied as denied:
        return ("deny", denied.rule, denied.message)
    return ("allow", *(f"{p.name}|{p.path}|{p.via}|{p.builtin}" for p in plan.programs))


OPEN = ShellPolicy(allow=True)
BLACKLISTS = (
    ShellPolicy(allow=True, blacklist=("rm",)),
    ShellPolicy(allow=True, blacklist=("/bin/rm",)),
    ShellPolicy(allow=True, blacklist=("/usr/bin/../bin/rm", "id")),
    # Listed everywhere (even rm itself): the blacklist is checked first and still wins.
    ShellPolicy(allow=True, whitelist=(*UNIVERSE, "dash", ":"), blacklist=("rm",)),
    ShellPolicy(allow=True, whitelist=("cat", "ls", "echo"), blacklist=("rm",)),
)
POLICIES = (
    OPEN,
    *BLACKLISTS,
    ShellPolicy(allow=True, whitelist=("echo", "cat")),
    ShellPolicy(allow=True, whitelist=()),
)


# --- properties -------------------------------------------------------------------------


@settings(max_examples=scaled(300))
@given(command_list(PLAIN))
@example(("echo \"${X:-'$(rm -rf x)'}\"", frozenset({"echo", "rm"})))
@example(('$"rm" -rf x', frozenset({"rm"})))
def test_analysis_finds_every_program(built: Built) -> None:
    """With no lists, a certain analysis names every program the shell would run."""
    text, truth = built
    plan = decide_shell(OPEN, text, CWD)
    if plan.certain:
        missing = truth - _found(plan) - {":"}
        assert not missing, f"{text!r}: analysis missed {sorted(missing)}; found {sorted(_found(plan))}"


@st.composite
def with_rm(draw: st.DrawFn) -> str:
    """A command list in which ``rm`` runs somewhere, spelled and wrapped at random."""
    rm, _ = draw(invocation(("rm",), wraps=3))
    if not draw(st.booleans()):
        return rm
    other, _ = draw(command_list(PLAIN[:-1], depth=2))
    form = draw(
        st.sampled_from(
            (
                "{r}; {o}",
                "{o} && {r}",
                "{o} | {r}",
                "({r})",
                "{{ {o}; {r}; }}",
                "echo $({r})",
                'echo "$({o}; {r})"',
                "if {o}; then {r}; fi",
                "! {r}",
                "{o} & {r}",
                "cat <({r})",
                'echo "${{X:-$({r})}}"',
                "echo \"${{X:-'$({r})'}}\"",
                "{o} # {r}\n{r}",
            )
        )
    )
    return form.format(r=rm, o=other)


@settings(max_examples=scaled(400))
@given(with_rm(), st.sampled_from(BLACKLISTS))
@example('$"rm" -rf x', BLACKLISTS[0])
@example("echo \"${X:-'$(rm -rf x)'}\"", BLACKLISTS[4])
def test_blacklisted_program_stays_denied(text: str, policy: ShellPolicy) -> None:
    with pytest.raises(Denied):
        plan = decide_shell(policy, text, CWD)
        print("allowed:", text, plan.programs)


@settings(max_examples=scaled(300))
@given(
    command_list(PLAIN + WRAPPER_NAMES[:3]),
    st.frozensets(st.sampled_from((*UNIVERSE, ":")), max_size=len(UNIVERSE)),
)
@example(("echo \"${X:-'$(id)'}\"", frozenset({"echo", "id"})), frozenset({"echo"}))
def test_whitelist_allows_only_listed_programs(built: Built, listed: frozenset[str]) -> None:
    text, truth = built
    policy = ShellPolicy(allow=True, whitelist=tuple(sorted(listed)))
    try:
        plan = decide_shell(policy, text, CWD)
    except Denied:
        return
    assert truth <= listed, f"{text!r} allowed under {sorted(listed)} but runs {sorted(truth - listed)}"
    assert _found(plan) & set(UNIVERSE) <= listed


SPAWN_WRAPS: tuple[tuple[str, ...], ...] = (
    (),
    ("env",),
    ("env", "-i", "A=1"),
    ("/usr/bin/env", "--"),
    ("nice", "-n", "3"),
    ("timeout", "5"),
    ("nohup",),
    ("stdbuf", "-o0"),
    ("setsid",),
    ("xargs", "-n", "1"),
    ("time", "-p"),
)


@settings(max_examples=scaled(200))
@given(
    st.lists(st.sampled_from(SPAWN_WRAPS), max_size=3),
    st.sampled_from(("rm", *(d + "rm" for d in DIR_SPELLINGS))),
    st.lists(st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\0"), max_size=6), max_size=3),
    st.sampled_from(("plain", "sh", "find")),
    st.sampled_from(BLACKLISTS),
)
def test_spawn_of_blacklisted_program_is_denied(
    wraps: list[tuple[str, ...]], rm: str, args: list[str], how: str, policy: ShellPolicy
) -> None:
    inner = [rm, *args]
    if how == "sh":
        inner = ["sh", "-c", shlex.join(inner)]
    elif how == "find":
        inner = ["find", ".", "-exec", *inner, "{}", ";"]
    argv = [word for wrap in wraps for word in wrap] + inner
    with pytest.raises(Denied):
        decide_spawn(policy, argv[0], argv[1:], CWD)


# Shell-ish text: metacharacters and keywords recombined, with any other character mixed in.
SHELLISH = st.lists(
    st.one_of(
        st.sampled_from([*list(" \t\n;&|<>()$`\"'\\{}[]*?~#=!-:,.%@^/0123456789"), "$(", "${", "<<", "$((", "$'"]),
        st.sampled_from(["rm", "ls", "echo", "sh -c ", "env ", "eval ", "case", "for", "if", "then", "fi", "do"]),
        st.characters(exclude_categories=("Cs",)),
    ),
    max_size=60,
).map("".join)


@settings(max_examples=scaled(500))
@given(SHELLISH)
@example("$(" * 40)
@example("${" * 40 + "}" * 40)
@example('"$(' * 30)
@example("`" + "\\`" * 30)
def test_parser_never_crashes(text: str) -> None:
    try:
        commands = parse(text)
    except (ShellSyntaxError, Uncertain):
        return
    assert all(isinstance(c, Command) for c in commands)


@settings(max_examples=scaled(300))
@given(SHELLISH, st.sampled_from(POLICIES), st.booleans())
def test_decisions_are_deterministic_and_only_deny(text: str, policy: ShellPolicy, strict: bool) -> None:
    """Only ``Denied`` ever comes out, and the same question gets the same answer."""
    first = _outcome(lambda: decide_shell(policy, text, CWD, strict=strict))
    assert _outcome(lambda: decide_shell(policy, text, CWD, strict=strict)) == first
    words = text.split()
    if words:
        spawn = _outcome(lambda: decide_spawn(policy, words[0], words[1:], CWD, strict=strict))
        assert _outcome(lambda: decide_spawn(policy, words[0], words[1:], CWD, strict=strict)) == spawn
