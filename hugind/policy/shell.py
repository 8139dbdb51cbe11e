"""Shell decisions: which programs a command string or a spawn would run.

A command string is parsed (:mod:`hugind.policy.shell_parse`) into every
simple command it contains; each program word is resolved against a fixed
safe PATH (never the agent's) and checked against the blacklist and the
whitelist. Wrappers that run another program named on their command line
(``env``, ``nice``, ``timeout``, ``xargs``, ``find -exec``, ``sh -c``,
``command``, ``eval`` ...) are looked through, so the program they run is
checked too. Programs that can run arbitrary code hugind cannot see
(interpreters, shells reading a script) pass only when whitelisted by name.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hugind.policy.exec_options import hidden_exec
from hugind.policy.model import Denied, ShellPolicy
from hugind.policy.plain_command import plain_words
from hugind.policy.shell_parse import Command, ShellSyntaxError, Uncertain, Word, parse


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SHELL = "/bin/sh"

# Builtins that cannot run another program; allowed under a whitelist when listed by name.
SAFE_BUILTINS = _names(
    "cd : true false pwd echo printf test [ exit return break continue read shift wait umask set "
    "ulimit times getopts kill type"
)
# Builtins that run or alter what runs: denied under a whitelist, looked through or refused otherwise.
EXEC_BUILTINS = frozenset({"command", "exec", "builtin", "eval"})
EXPORT_BUILTINS = frozenset({"export", "readonly", "local", "declare", "typeset"})
OPAQUE_BUILTINS = _names(
    "source . alias unalias trap hash enable fc let shopt unset mapfile readarray bind complete compgen"
)
SHELLS = _names("sh bash dash zsh ksh mksh lksh ash posh yash")
INTERPRETERS = _names(
    "awk gawk mawk nawk perl python pypy ruby node nodejs deno bun php lua luajit tclsh wish "
    "expect rscript julia fish csh tcsh pwsh make"
)
# Run a program chosen in ways hugind does not follow: refused whenever a list is set.
OPAQUE_WRAPPERS = _names(
    "chrt ionice taskset flock nsenter unshare chroot runuser su script watch strace ltrace gdb parallel systemd-run"
)
MULTI_CALL = frozenset({"busybox", "toybox"})
MAX_NESTING = 16

# Environment names that make a program load or run code of someone else's choosing.
DANGEROUS_ENV = _names(
    "LD_PRELOAD LD_LIBRARY_PATH LD_AUDIT BASH_ENV ENV IFS PS4 SHELLOPTS BASHOPTS PROMPT_COMMAND "
    "CDPATH GLOBIGNORE NODE_OPTIONS NODE_PATH RUBYOPT RUBYLIB PERLLIB GCONV_PATH HOSTALIASES "
    "LOCPATH NLSPATH RESOLV_HOST_CONF JAVA_TOOL_OPTIONS _JAVA_OPTIONS JDK_JAVA_OPTIONS GIT_SSH "
    "GIT_SSH_COMMAND GIT_EXEC_PATH GIT_ASKPASS SSH_ASKPASS GIT_PAGER GIT_EDITOR PAGER EDITOR "
    "VISUAL LESSOPEN LESSCLOSE MANPAGER BROWSER"
)
DANGEROUS_ENV_PREFIXES = ("LD_", "DYLD_", "BASH_FUNC_", "PYTHON", "PERL5", "LUA_", "GIT_CONFIG")


def is_dangerous_env(name: str) -> bool:
    return name in DANGEROUS_ENV or name.startswith(DANGEROUS_ENV_PREFIXES)


def build_env(policy: ShellPolicy, declared: Mapping[str, str], home: str) -> dict[str, str]:
    """The child's environment: HOME, LANG and the safe PATH; without env_clear also the
    agent's declared variables, never dangerous names."""
    env = {"HOME": home, "LANG": "C.UTF-8"}
    if not policy.env_clear:
        env.update({k: v for k, v in declared.items() if not is_dangerous_env(k)})
    env["PATH"] = SAFE_PATH
    return env


def resolve_program(name: str, cwd: Path) -> str | None:
    """The executable ``name`` denotes: safe-PATH lookup for bare names, else the path itself."""
    if not name:
        return None
    if "/" in name:
        path = name if os.path.isabs(name) else os.path.join(cwd, name)
        return path if _executable(path) else None
    for directory in SAFE_PATH.split(":"):
        path = os.path.join(directory, name)
        if _executable(path):
            return path
    return None


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _family(name: str) -> str:
    """``python3.11`` -> ``python``: the name without a trailing version."""
    return re.sub(r"[\d.]+$", "", os.path.basename(name)).lower()


@dataclass(frozen=True)
class Program:
    name: str  # as the command names it (after quote removal)
    path: str | None  # the executable it resolves to; None for shell builtins or not found
    via: str | None = None  # the wrapper that runs it
    builtin: bool = False
    # ``path`` resolved once for the whole decision (the analysis and both lists read it):
    # one answer per decision, and one walk of the path instead of three.
    real: str | None = field(default=None, compare=False, repr=False)

    def resolved(self) -> str | None:
        if not self.path:
            return None
        return self.real if self.real is not None else os.path.realpath(self.path)


@dataclass(frozen=True)
class ShellPlan:
    command: str
    argv: tuple[str, ...]  # what to execute: (SHELL, "-c", command)
    programs: tuple[Program, ...]
    cwd: Path
    certain: bool = True  # False: analysis stopped early (allowed only without lists)
    note: str = ""
    # The words themselves, when ``command`` is plainly one program found in the safe PATH:
    # what the shell would execute, and may be executed in its place (policy.plain_command).
    plain: tuple[str, ...] | None = None


@dataclass(frozen=True)
class SpawnPlan:
    argv: tuple[str, ...]  # resolved program path first
    programs: tuple[Program, ...]
    cwd: Path


# --- looking through wrappers -------------------------------------------------


@dataclass(frozen=True)
class _Opts:
    flags: str = ""
    valued: str = ""
    long_flags: frozenset[str] = frozenset()
    long_valued: frozenset[str] = frozenset()
    refused: frozenset[str] = frozenset()  # options that hide the program
    positional: int = 0  # operands before the program (timeout's duration)
    assignments: bool = False  # NAME=VALUE words before the program
    default: str | None = None  # program run when none is named (xargs: echo)


_WRAPPERS: dict[str, _Opts] = {
    "env": _Opts(
        "i0v",
        "uC",
        frozenset(["--ignore-environment", "--null", "--debug", "--default-signal", "--ignore-signal"]),
        frozenset({"--unset", "--chdir"}),
        frozenset({"-S", "--split-string", "-P", "--block-signal"}),
        assignments=True,
    ),
    "nice": _Opts(valued="n", long_valued=frozenset({"--adjustment"})),
    "nohup": _Opts(),
    "timeout": _Opts(
        "v",
        "sk",
        frozenset({"--preserve-status", "--foreground", "--verbose"}),
        frozenset({"--signal", "--kill-after"}),
        positional=1,
    ),
    "stdbuf": _Opts(valued="ioe", long_valued=frozenset({"--input", "--output", "--error"})),
    "setsid": _Opts("cfw", long_flags=frozenset({"--ctty", "--fork", "--wait"})),
    "time": _Opts(
        "pavq",
        "fo",
        frozenset({"--portability", "--append", "--verbose", "--quiet"}),
        frozenset({"--format", "--output"}),
    ),
    "xargs": _Opts(
        "0oprtxeil",
        "adEILnPs",
        frozenset(
            [
                "--null",
                "--open-tty",
                "--interactive",
                "--no-run-if-empty",
                "--verbose",
                "--exit",
                "--show-limits",
                "--eof",
                "--replace",
                "--max-lines",
            ]
        ),
        frozenset({"--arg-file", "--delimiter", "--max-args", "--max-procs", "--max-chars", "--process-slot-var"}),
        default="echo",
    ),
    "sudo": _Opts("AbEHKknPSVv", "CDghpRrtTUu", refused=frozenset({"-i", "-s", "-e", "-l"}), assignments=True),
    "doas": _Opts("n", "uC", refused=frozenset({"-s"})),
    "exec": _Opts("cl", "a"),
    "command": _Opts("p", refused=frozenset()),
    "builtin": _Opts(),
    "busybox": _Opts(),
    "toybox": _Opts(),
}


def _skip_options(words: Sequence[Word], kind: str, tool: str, check_name) -> int:
    """Index of the wrapped program's word in ``words`` (the arguments of wrapper ``kind``)."""
    spec = _WRAPPERS[kind]
    i = 0
    while i < len(words):
        word = words[i]
        if not word.literal:
            raise Uncertain(f"an expansion among the arguments of '{tool}'")
        text = word.text
        if text == "--":
            i += 1
            break
        if text == "-" and kind == "env":
            i += 1  # 'env -' is 'env -i'
            continue
        if text.startswith("--"):
            name = text.split("=", 1)[0]
            if name in spec.refused or name not in spec.long_flags | spec.long_valued:
                raise Uncertain(f"option {name} of '{tool}'")
            i += 2 if ("=" not in text and name in spec.long_valued) else 1
            continue
        if text.startswith("-") and len(text) > 1:
            if kind == "nice" and text[1:].isdigit():
                i += 1
                continue
            takes_next = False
            for j, ch in enumerate(text[1:], start=1):
                if f"-{ch}" in spec.refused or ch not in spec.flags + spec.valued:
                    raise Uncertain(f"option -{ch} of '{tool}'")
                if ch in spec.valued:
                    takes_next = j == len(text) - 1
                    break
            i += 2 if takes_next else 1
            continue
        break
    for _ in range(spec.positional):
        if i < len(words) and not words[i].literal:
            raise Uncertain(f"an expansion among the arguments of '{tool}'")
        i += 1
    while spec.assignments and i < len(words) and words[i].assignment is not None:
        check_name(words[i].assignment)
        i += 1
    return i


def _shell_c_string(words: Sequence[Word], tool: str) -> str | None:
    """The ``-c`` string of a shell invocation, or None when it runs a script or stdin."""
    i, has_c = 0, False
    while i < len(words):
        word = words[i]
        if not word.literal:
            raise Uncertain(f"an expansion among the arguments of '{tool}'")
        text = word.text
        if text == "--":
            i += 1
            break
        if text in ("-o", "+o", "-O", "+O"):
            i += 2
        elif text in ("--rcfile", "--init-file"):
            raise Uncertain(f"option {text} of '{tool}'")
        elif text.startswith("--"):
            i += 1
        elif text[:1] in "-+" and len(text) > 1:
            has_c = has_c or (text[0] == "-" and "c" in text[1:])
            i += 1
        else:
            break
    if not has_c:
        return None
    if i >= len(words):
        raise ShellSyntaxError(f"'{tool} -c' without a command string")
    if not words[i].literal:
        raise Uncertain(f"a '{tool} -c' string built from expansions")
    return words[i].text


def _find_exec_chains(words: Sequence[Word]) -> list[list[Word]]:
    chains: list[list[Word]] = []
    i = 0
    while i < len(words):
        if words[i].literal and words[i].text in ("-exec", "-execdir", "-ok", "-okdir"):
            j = i + 1
            while j < len(words) and not (words[j].literal and words[j].text in (";", "+")):
                j += 1
            chains.append(list(words[i + 1 : j]))
            i = j
        i += 1
    return chains


# --- analysis -------------------------------------------------------------------


@dataclass
class _Analysis:
    policy: ShellPolicy
    cwd: Path
    lists: bool  # a whitelist or blacklist is set
    in_shell: bool  # builtins exist (sh -c), not for spawn
    programs: list[Program] = field(default_factory=list)
    # Names and paths already looked up in this decision (shared with the lists): one PATH
    # walk and one resolution each.
    found: _Lookups = field(default_factory=lambda: _Lookups())

    def check_name(self, name: str | None) -> None:
        if name is None:
            return
        if is_dangerous_env(name):
            raise Denied("shell.env", f"shell: setting {name} is not allowed")
        if name == "PATH" and self.lists:
            raise Denied("shell.env", "shell: changing PATH is not allowed when a whitelist or blacklist is set")

    def string(self, source: str, depth: int) -> None:
        for cmd in _parsed(source):
            self.command(cmd, depth)

    def command(self, cmd: Command, depth: int) -> None:
        for word in cmd.assignments:
            self.check_name(word.assignment)
        if cmd.words:
            self.invocation(cmd.words, None, depth)

    def invocation(self, words: Sequence[Word], via: str | None, depth: int) -> None:
        if depth > MAX_NESTING:
            raise Uncertain(f"programs nested more than {MAX_NESTING} deep (wrappers, -c strings, eval)")
        word, args = words[0], words[1:]
        if not word.literal:
            raise Uncertain(f"a program name built from expansions ({word.raw!r})")
        name = word.text
        base = os.path.basename(name)
        builtin = (
            self.in_shell
            and "/" not in name
            and (name in SAFE_BUILTINS | EXEC_BUILTINS | EXPORT_BUILTINS | OPAQUE_BUILTINS)
        )
        path = None if builtin and name not in SAFE_BUILTINS else self.found.program(name, self.cwd)
        program = Program(name, path, via, builtin, self.found.real(path) if path else None)
        self.programs.append(program)
        real = os.path.basename(program.real) if program.real else base
        kinds = {base, real, _family(base), _family(real)}
        if builtin and any(a.literal and ("$(" in a.text or "`" in a.text) for a in args):
            raise Uncertain(f"a substitution inside a quoted argument of the '{name}' builtin")
        if builtin and name in OPAQUE_BUILTINS:
            raise Uncertain(f"the '{name}' builtin")
        if builtin and name in EXPORT_BUILTINS:
            for arg in args:
                if not arg.literal:
                    raise Uncertain(f"an expansion in an argument of '{name}'")
                self.check_name(arg.assignment)
            return
        if builtin and name == "eval":
            if not all(a.literal for a in args):
                raise Uncertain("an eval of expansions")
            self.string(" ".join(a.text for a in args), depth + 1)
            return
        if builtin and name == "command" and args and args[0].literal and args[0].text in ("-v", "-V"):
            return  # a lookup, runs nothing
        if kinds & OPAQUE_WRAPPERS:
            raise Uncertain(f"'{name}', which runs a program hugind does not follow")
        wrapper = next((k for k in (base, real) if k in _WRAPPERS), None)
        if wrapper is not None and (wrapper not in EXEC_BUILTINS or builtin):
            spec = _WRAPPERS[wrapper]
            if wrapper in MULTI_CALL and args and args[0].literal and args[0].text.startswith("-"):
                raise Uncertain(f"options of '{name}'")
            start = _skip_options(args, wrapper, name, self.check_name)
            inner = list(args[start:])
            if not inner and spec.default:
                inner = [Word(spec.default, True, False, spec.default)]
            if inner:
                self.invocation(inner, name, depth + 1)
            return
        hidden = hidden_exec(kinds, args)
        if hidden:
            raise Uncertain(hidden)
        if "find" in kinds:
            for chain in _find_exec_chains(args):
                if chain:
                    self.invocation(chain, name, depth + 1)
            return
        if kinds & SHELLS:
            text = _shell_c_string(args, name)
            if text is not None:
                self.string(text, depth + 1)


# Parsing is a pure function of the string (no file, no policy): an agent repeating a
# command parses it once. Its results are frozen dataclasses, safe to share.
MEMO_MAX_LENGTH = 4096


@functools.lru_cache(maxsize=128)
def _parse_memo(source: str) -> tuple[Command, ...]:
    return tuple(parse(source))


def _parsed(source: str) -> Sequence[Command]:
    return _parse_memo(source) if len(source) <= MEMO_MAX_LENGTH else parse(source)


def _trampoline(program: Program) -> bool:
    names = {os.path.basename(program.name)}
    real = program.resolved()
    if real:
        names.add(os.path.basename(real))
    names |= {_family(n) for n in names}
    trampolines = SHELLS | INTERPRETERS | OPAQUE_WRAPPERS | set(_WRAPPERS) | {"find"}
    return bool(names & trampolines)


class ProgramLists:
    """The whitelist and blacklist of a policy, resolved for matching."""

    def __init__(self, policy: ShellPolicy, cwd: Path, found: _Lookups | None = None) -> None:
        found = _Lookups() if found is None else found
        self.whitelist = policy.whitelist
        self.blacklist = policy.blacklist
        self.white_names = {e for e in policy.whitelist or () if "/" not in e}
        self.white_paths = _resolved(policy.whitelist or (), cwd, found)
        self.black_names = {os.path.basename(e) for e in policy.blacklist}
        self.black_paths = _resolved(policy.blacklist, cwd, found)

    @property
    def active(self) -> bool:
        return self.whitelist is not None or bool(self.blacklist)

    def check(self, programs: Sequence[Program], shown: str) -> None:
        """Blacklist first (so ``command rm`` names the blacklist), then the whitelist."""
        for program in programs:
            self._check_black(program, shown)
        for program in programs:
            self._check_white(program, shown)

    def _check_black(self, program: Program, shown: str) -> None:
        name = program.name
        base = os.path.basename(name)
        real = program.resolved()
        if base in self.black_names or (real and real in self.black_paths):
            entry = base if base in self.black_names else name
            raise Denied("shell.blacklist", f"shell: program '{name}' matches blacklist entry '{entry}' in {shown}")
        if self.blacklist and self.whitelist is None and "/" in name and not os.path.isabs(name):
            raise Denied(
                "shell.relative-path",
                f"shell: program '{name}' is a relative path; name it or give an absolute path ({shown})",
            )

    def _check_white(self, program: Program, shown: str) -> None:
        if self.whitelist is None:
            return
        name = program.name
        real = program.resolved()
        if program.builtin and name in EXEC_BUILTINS | OPAQUE_BUILTINS:
            raise Denied("shell.builtin", f"shell: the '{name}' builtin is not allowed under a whitelist ({shown})")
        if "/" in name and not os.path.isabs(name):
            raise Denied(
                "shell.relative-path",
                f"shell: program '{name}' is a relative path; the whitelist matches names looked up in the "
                f"safe PATH or absolute paths ({shown})",
            )
        listed = (program.builtin and name in self.white_names) or (real is not None and real in self.white_paths)
        if listed and real and os.path.basename(real) in MULTI_CALL:
            listed = os.path.basename(name) in self.white_names or name in (self.whitelist or ())
        if listed:
            return
        if program.path is None and not program.builtin:
            raise Denied("shell.not-found", f"shell: program '{name}' is not found in the safe PATH ({shown})")
        if _trampoline(program):
            raise Denied(
                "shell.trampoline",
                f"shell: '{name}' runs other programs (a trampoline) and is not whitelisted ({shown})",
            )
        raise Denied("shell.whitelist", f"shell: program '{name}' is not in the whitelist ({shown})")


def _resolved(entries: Sequence[str], cwd: Path, found: _Lookups) -> set[str]:
    out = set()
    for entry in entries:
        path = found.program(entry, cwd)
        if path:
            out.add(found.real(path))
    return out


class _Lookups:
    """resolve_program and realpath, once per name or path and decision: never kept across
    decisions, where a file or symlink changed in between must be seen."""

    def __init__(self) -> None:
        self._programs: dict[str, str | None] = {}
        self._reals: dict[str, str] = {}

    def program(self, name: str, cwd: Path) -> str | None:
        if name not in self._programs:
            self._programs[name] = resolve_program(name, cwd)
        return self._programs[name]

    def real(self, path: str) -> str:
        """realpath's answer, asked of the kernel in one resolution (confine.plan.real_path)."""
        if path not in self._reals:
            from hugind.confine.plan import real_path

            self._reals[path] = real_path(path)
        return self._reals[path]


def _shown(text: str) -> str:
    text = text if len(text) <= 120 else text[:117] + "..."
    return repr(text)


def _precheck(policy: ShellPolicy, strict: bool, what: str) -> None:
    if not policy.allow:
        raise Denied("shell.allow", "shell: disabled (permissions.shell.allow is false)")
    if strict and policy.whitelist is None:
        raise Denied("shell.strict", f"shell: {what} refused: --strict requires permissions.shell.whitelist")


def decide_shell(policy: ShellPolicy, command: str, cwd: Path, *, strict: bool = False) -> ShellPlan:
    """Check a ``sh -c`` string; raise Denied or return the plan."""
    _precheck(policy, strict, "command")
    found = _Lookups()
    lists = ProgramLists(policy, cwd, found)
    shown = _shown(command)
    if not command.strip():
        raise Denied("shell.syntax", "shell: empty command")
    analysis = _Analysis(policy, cwd, lists.active, in_shell=True, found=found)
    certain, note = _analyze(lambda: analysis.string(command, 0), shown, lists)
    lists.check(analysis.programs, shown)
    plain = plain_words(command)
    if plain is not None and (not analysis.programs or analysis.programs[0].path is None):
        plain = None  # not found: the shell's own "not found" and 127
    return ShellPlan(command, (SHELL, "-c", command), tuple(analysis.programs), cwd, certain, note, plain)


def _analyze(step: Callable[[], object], shown: str, lists: ProgramLists) -> tuple[bool, str]:
    """Run one analysis; return (certain, note). What cannot be analysed with
    certainty is a denial as soon as a whitelist or blacklist is in force."""
    try:
        step()
    except ShellSyntaxError as exc:
        raise Denied("shell.syntax", f"shell: cannot parse {shown}: {exc}") from None
    except (Uncertain, RecursionError) as exc:
        if lists.active:
            raise Denied(
                "shell.uncertain",
                f"shell: cannot analyze {exc} with certainty in {shown}; denied because a whitelist or "
                "blacklist is set",
            ) from None
        return False, str(exc)
    return True, ""


def decide_spawn(
    policy: ShellPolicy, program: str, args: Sequence[str], cwd: Path, *, strict: bool = False
) -> SpawnPlan:
    """Check a direct exec of ``program`` with ``args``; raise Denied or return the plan."""
    _precheck(policy, strict, "spawn")
    if not program or any("\0" in a for a in (program, *args)):
        raise Denied("shell.syntax", "shell: empty program name or NUL byte in arguments")
    found = _Lookups()
    lists = ProgramLists(policy, cwd, found)
    shown = _shown(" ".join([program, *args]))
    words = [Word(t, True, False, t) for t in (program, *args)]
    analysis = _Analysis(policy, cwd, lists.active, in_shell=False, found=found)
    _analyze(lambda: analysis.invocation(words, None, 0), shown, lists)
    lists.check(analysis.programs, shown)
    first = analysis.programs[0]
    if first.path is None:
        raise Denied("shell.not-found", f"shell: program '{program}' not found in the safe PATH")
    return SpawnPlan((first.path, *args), tuple(analysis.programs), cwd)
