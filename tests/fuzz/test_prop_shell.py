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
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from hugind.policy.model import Denied, ShellPolicy
from hugind.policy.shell import (
    _WRAPPERS,
    SAFE_PATH,
    ShellPlan,
    SpawnPlan,
    decide_shell,
    decide_spawn,
    resolve_program,
)
from hugind.policy.shell_parse import Command, ShellSyntaxError, Uncertain, parse
from tests.fuzz.profiles import scaled

CWD = Path(os.path.realpath("/"))  # relative program paths resolve against it (and are refused under lists)

# Programs the grammar runs. A case that needs one this machine lacks is not drawn (and
# ``test_grammar_program_is_installed`` says which, as a skip with its reason).
WANTED_PLAIN = ("cat", "ls", "echo", "id", "head", "true", "printf", "rm")
WANTED_WRAPPERS = ("env", "nice", "timeout", "nohup", "stdbuf", "setsid", "time", "xargs", "sh", "bash", "find")
BUILTIN_WRAPPERS = ("command", "exec", "eval")  # looked through, but denied under a whitelist
# Programs whose name extends a grammar name (or is extended by one: ``time``/``timeout``):
# a whitelist matching by prefix would let ``[ls]`` run ``lsattr``. None of them runs another
# program, so the grammar's truth stays exact.
WANTED_COMPANIONS = ("lsattr", "lsblk", "rmdir", "sha256sum", "findmnt", "envsubst", "catman", "headless", "idn")
MISSING = frozenset(n for n in (*WANTED_PLAIN, *WANTED_WRAPPERS, "dash") if resolve_program(n, CWD) is None)
PLAIN = tuple(n for n in WANTED_PLAIN if n not in MISSING)
WRAPPER_NAMES = tuple(n for n in WANTED_WRAPPERS if n not in MISSING)
COMPANIONS = tuple(n for n in WANTED_COMPANIONS if resolve_program(n, CWD) is not None)
UNIVERSE = PLAIN + WRAPPER_NAMES
# The whitelist property's programs: the first plain ones, three wrappers, the companions.
WHITE_GRAMMAR = PLAIN + tuple(n for n in ("env", "nice", "timeout") if n not in MISSING) + COMPANIONS

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


def _needs(*names: str) -> None:
    """Skip the calling test when a program it cannot do without is missing, naming it."""
    missing = sorted(set(names) & MISSING)
    if missing:
        pytest.skip(f"programs missing from {SAFE_PATH}: {missing}")


@pytest.mark.parametrize("name", (*WANTED_PLAIN, *WANTED_WRAPPERS, "dash"))
def test_grammar_program_is_installed(name: str) -> None:
    """One line per program the grammar would use: a missing one is a visible skip, and
    the cases needing it are not drawn (the other properties still run)."""
    if name in MISSING:
        pytest.skip(f"{name} is not in {SAFE_PATH}: cases running it are left out")
    assert resolve_program(name, CWD) is not None


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


# Wrappers of the policy's own table the grammar does not draw, each with why.
NOT_DRAWN = {
    "sudo": "needs a sudoers entry to run anything; decided by its own option table",
    "doas": "needs a doas.conf to run anything; decided by its own option table",
    "builtin": "runs shell builtins only, never a program",
    "busybox": "a multi-call binary, matched by the name it is called as",
    "toybox": "a multi-call binary, matched by the name it is called as",
}


def test_every_wrapper_the_policy_looks_through_is_drawn():
    """A wrapper added to hugind's table fails here until the grammar draws it (or says why not)."""
    assert set(_WRAPPERS) == set(WRAP_OPTIONS) | set(NOT_DRAWN)


# Builtins are always there; a wrapper program only when installed.
WRAP_KINDS = tuple(
    k for k in (*WRAP_OPTIONS, "sh", "bash", "eval", "find") if k in BUILTIN_WRAPPERS or k not in MISSING
)


@st.composite
def wrapped(draw: st.DrawFn, inner: str, truth: frozenset[str]) -> Built:
    kind = draw(st.sampled_from(WRAP_KINDS))
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
    other, _ = draw(command_list(tuple(n for n in PLAIN if n != "rm"), depth=2))
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
    _needs("rm")
    with pytest.raises(Denied):
        plan = decide_shell(policy, text, CWD)
        print("allowed:", text, plan.programs)


@settings(max_examples=scaled(300))
@given(
    command_list(WHITE_GRAMMAR),
    st.frozensets(st.sampled_from((*UNIVERSE, *COMPANIONS, ":")), max_size=len(UNIVERSE)),
)
@example(("echo \"${X:-'$(id)'}\"", frozenset({"echo", "id"})), frozenset({"echo"}))
@example(("lsattr -d x", frozenset({"lsattr"})), frozenset({"ls"}))  # a prefix match let it through
def test_whitelist_allows_only_listed_programs(built: Built, listed: frozenset[str]) -> None:
    text, truth = built
    policy = ShellPolicy(allow=True, whitelist=tuple(sorted(listed)))
    try:
        plan = decide_shell(policy, text, CWD)
    except Denied:
        return
    assert truth <= listed, f"{text!r} allowed under {sorted(listed)} but runs {sorted(truth - listed)}"
    assert _found(plan) & set(UNIVERSE + COMPANIONS) <= listed


def _partners() -> dict[str, str]:
    """Each companion and the grammar name it extends, both ways (lsattr <-> ls)."""
    out: dict[str, str] = {}
    for companion in COMPANIONS:
        prefix = max((n for n in WHITE_GRAMMAR if companion.startswith(n) and n != companion), key=len, default=None)
        if prefix:
            out[companion] = prefix
            out.setdefault(prefix, companion)
    return out


PARTNER = _partners()


@settings(max_examples=scaled(200))
@given(command_list(WHITE_GRAMMAR))
def test_whitelist_of_the_prefix_partners_allows_none_of_them(built: Built) -> None:
    """Whitelist, instead of each program run, its prefix partner (``lsattr`` -> ``[ls]``,
    ``ls`` -> ``[lsattr]``): whatever is allowed runs only what is listed."""
    text, truth = built
    listed = frozenset(PARTNER.get(n, n) for n in truth)
    assume(listed != truth)
    try:
        plan = decide_shell(ShellPolicy(allow=True, whitelist=tuple(sorted(listed))), text, CWD)
    except Denied:
        return
    assert truth <= listed, f"{text!r} allowed under {sorted(listed)} but runs {sorted(truth - listed)}"
    assert _found(plan) & set(UNIVERSE + COMPANIONS) <= listed


# (listed, run): each name a prefix of the other's; the example that a prefix match let through first.
PREFIX_PAIRS = (
    ("ls", "lsattr"),
    ("lsattr", "ls"),
    ("rm", "rmdir"),
    ("time", "timeout"),
    ("timeout", "time"),
    ("sh", "sha256sum"),
    ("find", "findmnt"),
    ("env", "envsubst"),
)


@pytest.mark.parametrize(("listed", "run"), PREFIX_PAIRS, ids=[f"[{a}]-runs-{b}" for a, b in PREFIX_PAIRS])
@pytest.mark.parametrize("spelling", ("bare", "path"))
def test_whitelist_never_matches_a_name_by_prefix(listed: str, run: str, spelling: str) -> None:
    """``[ls]`` must not allow ``lsattr`` (nor ``/usr/bin/lsattr``), as a command or a spawn."""
    _needs(*({listed, run} & set(WANTED_PLAIN + WANTED_WRAPPERS)))
    program = resolve_program(run, CWD)
    if program is None or resolve_program(listed, CWD) is None:
        pytest.skip(f"{run} or {listed} is not in {SAFE_PATH}")
    word = program if spelling == "path" else run
    args = ["5", "true"] if run == "timeout" else ["true"] if run in WANTED_WRAPPERS else ["x"]
    policy = ShellPolicy(allow=True, whitelist=(listed,))
    with pytest.raises(Denied) as shell:
        decide_shell(policy, shlex.join([word, *args]), CWD)
    # Refused by the whitelist itself, for that program (not an analysis it gave up on).
    assert shell.value.rule in ("shell.whitelist", "shell.trampoline"), shell.value
    assert f"'{word}'" in shell.value.message
    with pytest.raises(Denied) as spawn:
        decide_spawn(policy, word, args, CWD)
    assert spawn.value.rule == shell.value.rule
    if listed not in WANTED_WRAPPERS:  # a wrapper alone is uncertain; a plain program passes
        assert decide_shell(policy, f"{listed} x", CWD).programs  # the denial is about the name


_ALL_SPAWN_WRAPS: tuple[tuple[str, ...], ...] = (
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
SPAWN_WRAPS = tuple(w for w in _ALL_SPAWN_WRAPS if not w or os.path.basename(w[0]) not in MISSING)


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
    _needs("rm", *{"sh", "find"} & {how})
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
