"""Whitelisted programs that can run other programs through their own options.

Whitelisting ``sed`` should not whitelist every program ``sed`` can start.
For common tools with such a feature, the invocation is checked here; what
would run a program hugind cannot follow is reported as a reason, which the
shell analysis treats as uncertainty (denied whenever a list is set). Tools
whose configuration or input can always run programs are reasons on their
own. The list is knowledge, not a proof: POLICY.md says that a whitelist
trusts the programs it names.
"""

from __future__ import annotations

from collections.abc import Sequence

from hugind.policy.shell_parse import Word

# Programs that run commands taken from their configuration, input or defaults.
ALWAYS = {
    "git": "git runs programs named in its configuration (hooks, core.pager, core.fsmonitor, aliases)",
    "ssh": "ssh runs local and remote commands (ProxyCommand, LocalCommand)",
    "scp": "scp starts ssh, which runs commands from its configuration",
    "sftp": "sftp starts ssh, which runs commands from its configuration",
    "ed": "ed runs '!command' lines from its input",
    "ex": "ex runs '!command' lines from its input",
    "vi": "vi runs commands from its input",
    "vim": "vim runs commands from its input",
    "nvim": "nvim runs commands from its input",
    "emacs": "emacs evaluates code from its input",
}

# Long options (prefixes) that name a program to run.
LONG_OPTIONS = {
    "tar": (
        "--checkpoint-action",
        "--to-command",
        "--use-compress-program",
        "--info-script",
        "--new-volume-script",
        "--rsh-command",
        "--rmt-command",
    ),
    "sort": ("--compress-program",),
    "split": ("--filter",),
    "zip": ("--unzip-command",),
    "rsync": ("--rsh", "--rsync-path"),
    "cpio": ("--rsh-command",),
    "man": ("--pager", "--html", "--browser"),
}

# Short options (letters, possibly bundled: -avze) that name a program to run.
SHORT_OPTIONS = {"tar": "IF", "rsync": "e", "man": "PHB", "zip": ""}
SHORT_PREFIXES = {"zip": ("-TT",)}

FAMILIES = {"gtar": "tar", "bsdtar": "tar", "gsed": "sed", "gsort": "sort", "gsplit": "split"}


def hidden_exec(names: set[str], args: Sequence[Word]) -> str | None:
    """Why this invocation could run a program hugind does not see, or None."""
    for name in sorted(names):
        tool = FAMILIES.get(name, name)
        if tool in ALWAYS:
            return ALWAYS[tool]
        reason = _check_tool(tool, args)
        if reason:
            return reason
    return None


def _check_tool(tool: str, args: Sequence[Word]) -> str | None:
    known = tool == "sed" or tool in LONG_OPTIONS or tool in SHORT_OPTIONS
    if not known:
        return None
    if not all(a.literal for a in args):
        return f"an expansion among the options of '{tool}', which can run programs"
    texts = [a.text for a in args]
    if tool == "sed":
        # GNU sed's 'e' command and 's///e' flag run programs; --sandbox refuses them.
        return None if "--sandbox" in texts else "sed without --sandbox (its 'e' command runs programs)"
    for i, text in enumerate(texts):
        if text == "--":
            break
        if text.startswith(LONG_OPTIONS.get(tool, ())):
            return f"'{tool} {text}', which runs a program"
        if text.startswith(SHORT_PREFIXES.get(tool, ())):
            return f"'{tool} {text}', which runs a program"
        cluster = text[1:] if text.startswith("-") and not text.startswith("--") else ""
        if tool == "tar" and i == 0 and not text.startswith("-"):
            cluster = text  # old-style bundle: tar cIf ...
        letters = SHORT_OPTIONS.get(tool, "")
        if cluster and letters and any(ch in letters for ch in cluster):
            return f"'{tool} {text}', which runs a program"
    return None
