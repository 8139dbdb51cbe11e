"""Attack vectors against the policy, as data, so other suites can replay them.

Each vector names what the guest asks for and the denial it must get: the
audit rule that decides and a fragment of the message. ``tests/policy``
replays them against the engine and the capabilities directly; the red-team
suite can replay them as JS agents through ``hugind run`` using the same
layouts and policies (``FS_POLICY``, ``NET_POLICY``, ``SHELL_POLICY``).
"""

from __future__ import annotations

import os
from pathlib import Path

# --- filesystem --------------------------------------------------------------------

FS_POLICY = {"filesystem": {"read": ["data"], "write": ["out"]}}


def build_fs_layout(root: Path, outside: Path) -> None:
    """An agent root with a readable ``data/``, a writable ``out/``, decoys and links out.

    ``outside`` is a directory next to the agent holding a secret the guest must never reach.
    """
    outside.mkdir(parents=True, exist_ok=True)
    (outside / "secret.txt").write_text("TOP SECRET")
    (root / "data").mkdir(parents=True, exist_ok=True)
    (root / "data" / "readme.txt").write_text("public data")
    (root / "data-evil").mkdir(exist_ok=True)
    (root / "data-evil" / "x.txt").write_text("not allowed")
    (root / "out").mkdir(exist_ok=True)
    (root / "out" / "mine.txt").write_text("written by the agent")
    (root / "notes.txt").write_text("agent root file, not listed")
    os.symlink(outside / "secret.txt", root / "data" / "link_out")
    os.symlink(outside, root / "data" / "dirlink")
    os.symlink(os.path.relpath(outside, root / "data"), root / "data" / "rel_dirlink")
    os.symlink(outside, root / "out" / "dirlink")
    os.symlink(outside / "secret.txt", root / "out" / "link_out")
    os.symlink(root / "data" / "readme.txt", root / "out" / "link_to_data")
    os.symlink(outside / "missing.txt", root / "out" / "dangling_out")


# (guest path; "{outside}" is replaced by the outside dir), rule, message fragment
FS_READ_ESCAPES: list[tuple[str, str, str]] = [
    ("../outside/secret.txt", "filesystem.outside-roots", "outside the readable roots"),
    ("data/../../outside/secret.txt", "filesystem.outside-roots", "outside the readable roots"),
    ("data/../notes.txt", "filesystem.outside-roots", "outside the readable roots"),
    ("{outside}/secret.txt", "filesystem.outside-roots", "outside the readable roots"),
    ("data-evil/x.txt", "filesystem.outside-roots", "outside the readable roots"),
    ("data/link_out", "filesystem.outside-roots", "outside the readable roots"),
    ("data/dirlink/secret.txt", "filesystem.outside-roots", "outside the readable roots"),
    ("data/dirlink/", "filesystem.outside-roots", "outside the readable roots"),
    ("data/rel_dirlink/secret.txt", "filesystem.outside-roots", "outside the readable roots"),
    ("out/link_out", "filesystem.outside-roots", "outside the readable roots"),
    ("out/dirlink/secret.txt", "filesystem.outside-roots", "outside the readable roots"),
    ("/etc/passwd", "filesystem.outside-roots", "outside the readable roots"),
    ("/proc/self/environ", "filesystem.special", "/proc is off limits"),
    ("/proc/self/root/etc/passwd", "filesystem.outside-roots", "outside the readable roots"),
    ("/proc/self/mem", "filesystem.special", "/proc is off limits"),
    ("/sys/kernel", "filesystem.special", "/sys is off limits"),
    ("/dev/zero", "filesystem.special", "/dev is off limits"),
]

# (op, args with "{outside}" templates, rule, message fragment); all under FS_POLICY.
FS_WRITE_ESCAPES: list[tuple[str, dict[str, str], str, str]] = [
    ("fs.write_text", {"path": "data/readme.txt", "data": "x"}, "filesystem.outside-roots", "writable roots"),
    (
        "fs.append_text",
        {"path": "data/readme.txt", "data": "x"},
        "filesystem.outside-roots",
        "writable roots",
    ),
    (
        "fs.write_bytes",
        {"path": "data/readme.txt", "data": "x"},
        "filesystem.outside-roots",
        "writable roots",
    ),
    (
        "fs.write_text",
        {"path": "out/../data/readme.txt", "data": "x"},
        "filesystem.outside-roots",
        "writable",
    ),
    (
        "fs.write_text",
        {"path": "out/link_to_data", "data": "x"},
        "filesystem.outside-roots",
        "writable roots",
    ),
    ("fs.write_text", {"path": "out/link_out", "data": "x"}, "filesystem.outside-roots", "writable roots"),
    (
        "fs.write_text",
        {"path": "out/dangling_out", "data": "x"},
        "filesystem.outside-roots",
        "writable roots",
    ),
    (
        "fs.write_text",
        {"path": "out/dirlink/pwned", "data": "x"},
        "filesystem.outside-roots",
        "writable roots",
    ),
    ("fs.write_text", {"path": "out-evil/x", "data": "x"}, "filesystem.outside-roots", "writable roots"),
    ("fs.rename", {"src": "out/mine.txt", "dst": "data/readme.txt"}, "filesystem.outside-roots", "writable"),
    (
        "fs.rename",
        {"src": "data/readme.txt", "dst": "out/stolen.txt"},
        "filesystem.outside-roots",
        "writable",
    ),
    ("fs.remove", {"path": "data/readme.txt"}, "filesystem.outside-roots", "writable roots"),
    ("fs.remove", {"path": "out"}, "filesystem.root", "allowed root itself"),
    ("fs.mkdir", {"path": "data/newdir"}, "filesystem.outside-roots", "writable roots"),
    ("fs.copy", {"src": "out/mine.txt", "dst": "data/copy.txt"}, "filesystem.outside-roots", "writable"),
    (
        "fs.copy",
        {"src": "{outside}/secret.txt", "dst": "out/copy.txt"},
        "filesystem.outside-roots",
        "readable",
    ),
    ("fs.write_text", {"path": "/proc/self/environ", "data": "x"}, "filesystem.special", "off limits"),
]

# --- network -------------------------------------------------------------------------

NET_POLICY = {"network": {"allow": True}}  # any host, private networks blocked (the default)

# (url, rule, message fragment) under NET_POLICY
NET_BLOCKED: list[tuple[str, str, str]] = [
    ("http://127.0.0.1/", "network.block_private_networks", "127.0.0.0/8 (loopback)"),
    (
        "http://2130706433/",
        "network.block_private_networks",
        "host 127.0.0.1 is in blocked range 127.0.0.0/8",
    ),
    ("http://0x7f000001/", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
    ("http://0177.0.0.1/", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
    ("http://127.1/", "network.block_private_networks", "host 127.0.0.1 is in blocked range"),
    ("http://017700000001/", "network.block_private_networks", "host 127.0.0.1"),
    ("http://0/", "network.blocked-range", "0.0.0.0/8"),
    ("http://0.0.0.0:8080/", "network.blocked-range", "0.0.0.0/8"),
    ("http://[::]/", "network.blocked-range", "::/128 (unspecified)"),
    ("http://[::1]/", "network.block_private_networks", "::1/128 (loopback)"),
    ("http://[::ffff:127.0.0.1]/", "network.block_private_networks", "via IPv4-mapped 127.0.0.1"),
    ("http://[::ffff:7f00:1]/", "network.block_private_networks", "via IPv4-mapped 127.0.0.1"),
    ("http://[::ffff:169.254.169.254]/", "network.block_private_networks", "169.254.0.0/16"),
    ("http://[64:ff9b::7f00:1]/", "network.block_private_networks", "via NAT64 127.0.0.1"),
    ("http://[64:ff9b::a9fe:a9fe]/", "network.block_private_networks", "via NAT64 169.254.169.254"),
    ("http://[2002:7f00:1::1]/", "network.block_private_networks", "via 6to4 127.0.0.1"),
    ("http://[2002:a00:1::]/", "network.block_private_networks", "via 6to4 10.0.0.1"),
    ("http://[::127.0.0.1]/", "network.block_private_networks", "via IPv4-compatible 127.0.0.1"),
    ("http://169.254.169.254/latest/meta-data/", "network.block_private_networks", "(link-local/metadata)"),
    ("http://[fd00:ec2::254]/", "network.block_private_networks", "fc00::/7 (unique local)"),
    ("http://[fe80::1]/", "network.block_private_networks", "fe80::/10 (link-local)"),
    ("http://100.64.0.1/", "network.block_private_networks", "100.64.0.0/10 (carrier-grade NAT"),
    ("http://10.0.0.1/", "network.block_private_networks", "10.0.0.0/8"),
    ("http://172.16.5.4/", "network.block_private_networks", "172.16.0.0/12"),
    ("http://192.168.1.1/", "network.block_private_networks", "192.168.0.0/16"),
    ("http://224.0.0.1/", "network.blocked-range", "multicast"),
    ("http://255.255.255.255/", "network.blocked-range", "broadcast"),
    ("http://localhost/", "network.block_private_networks", "host localhost resolves to"),
    ("http://LocalHost./", "network.block_private_networks", "host localhost resolves to"),
]

# (url, message fragment): refused before any address is looked at (rule network.url)
NET_BAD_URLS: list[tuple[str, str]] = [
    ("ftp://127.0.0.1/", "scheme ftp: is not allowed"),
    ("file:///etc/passwd", "scheme file: is not allowed"),
    ("gopher://127.0.0.1:70/", "scheme gopher: is not allowed"),
    ("//127.0.0.1/", "scheme (none) is not allowed"),
    ("http://allowed.com@127.0.0.1/", "credentials"),
    ("http://user:pw@example.com/", "credentials"),
    ("http://allowed.com\\@evil.com/", "backslashes"),
    ("http://exa mple.com/", "whitespace"),
    ("http://example.com:99999/", "invalid host"),
    ("http://999.1.1.1/", "invalid host"),
    ("http://1.2.3.4.5/", "invalid host"),
    ("http://[fe80::1%25eth0]/", "invalid host"),
    ("http://%31%32%37.0.0.1/", "invalid host"),
    ("http:///path", "no host"),
]

# --- shell -----------------------------------------------------------------------------

SHELL_POLICY = {"shell": {"allow": True, "whitelist": ["echo", "ls", "cat", "true"], "blacklist": ["rm"]}}

# (command, rule, message fragment) under SHELL_POLICY
SHELL_DENIED: list[tuple[str, str, str]] = [
    ("ls; id", "shell.whitelist", "program 'id' is not in the whitelist"),
    ("ls && id", "shell.whitelist", "'id'"),
    ("ls || id", "shell.whitelist", "'id'"),
    ("ls | id", "shell.whitelist", "'id'"),
    ("ls & id", "shell.whitelist", "'id'"),
    ("ls\nid", "shell.whitelist", "'id'"),
    ("ls;id", "shell.whitelist", "'id'"),
    ("echo $(id)", "shell.whitelist", "'id'"),
    ("echo `id`", "shell.whitelist", "'id'"),
    ('echo "$(id)"', "shell.whitelist", "'id'"),
    ('echo "`id`"', "shell.whitelist", "'id'"),
    ("echo ${X:-$(id)}", "shell.whitelist", "'id'"),
    ("echo $(echo $(id))", "shell.whitelist", "'id'"),
    ("cat <(id)", "shell.whitelist", "'id'"),
    ("echo >(id)", "shell.whitelist", "'id'"),
    ("(id)", "shell.whitelist", "'id'"),
    ("{ id; }", "shell.whitelist", "'id'"),
    ("if id; then ls; fi", "shell.whitelist", "'id'"),
    ("! id", "shell.whitelist", "'id'"),
    ("ls >x; id", "shell.whitelist", "'id'"),
    ("ls 2>&1 | id", "shell.whitelist", "'id'"),
    ("ls &>/dev/null id", "shell.whitelist", "'id'"),
    ("sh -c id", "shell.trampoline", "'sh' runs other programs"),
    ("bash -c 'ls'", "shell.trampoline", "'bash' runs other programs"),
    ("/bin/sh -c ls", "shell.trampoline", "'/bin/sh' runs other programs"),
    ("env id", "shell.trampoline", "'env' runs other programs"),
    ("env", "shell.trampoline", "'env' runs other programs"),
    ("xargs id", "shell.trampoline", "'xargs' runs other programs"),
    ("find . -exec id ;", "shell.trampoline", "'find' runs other programs"),
    ("awk 'BEGIN{system(\"id\")}'", "shell.trampoline", "'awk' runs other programs"),
    ("python3 -c 'import os'", "shell.trampoline", "'python3' runs other programs"),
    ("perl -e 1", "shell.trampoline", "'perl' runs other programs"),
    ("node -e 1", "shell.trampoline", "'node' runs other programs"),
    ("nice id", "shell.trampoline", "'nice' runs other programs"),
    ("timeout 5 ls", "shell.trampoline", "'timeout' runs other programs"),
    ("./ls", "shell.relative-path", "program './ls' is a relative path"),
    ("bin/ls", "shell.relative-path", "relative path"),
    ("../../usr/bin/ls", "shell.relative-path", "relative path"),
    ("$X", "shell.uncertain", "program name built from expansions"),
    ("${X} /", "shell.uncertain", "program name built from expansions"),
    ("l$X /", "shell.uncertain", "program name built from expansions"),
    ("$(echo id)", "shell.uncertain", "program name built from expansions"),
    ("`echo id`", "shell.uncertain", "program name built from expansions"),
    ("l? /", "shell.uncertain", "program name built from expansions"),
    ("/usr/bin/i*", "shell.uncertain", "program name built from expansions"),
    ("{id,-u}", "shell.uncertain", "program name built from expansions"),
    ("~/ls", "shell.uncertain", "program name built from expansions"),
    ("eval id", "shell.builtin", "the 'eval' builtin"),
    ("eval ls", "shell.builtin", "the 'eval' builtin"),
    ("exec ls", "shell.builtin", "the 'exec' builtin"),
    ("command ls", "shell.builtin", "the 'command' builtin"),
    ("builtin echo hi", "shell.builtin", "the 'builtin' builtin"),
    (". ./script.sh", "shell.uncertain", "the '.' builtin"),
    ("source ./script.sh", "shell.uncertain", "the 'source' builtin"),
    ("alias ls=id", "shell.uncertain", "the 'alias' builtin"),
    ("trap id EXIT", "shell.uncertain", "the 'trap' builtin"),
    ("cat <<EOF\nhi\nEOF", "shell.uncertain", "a here-document"),
    ("f() { ls; }; f", "shell.uncertain", "a function definition"),
    ("for x in a; do ls; done", "shell.uncertain", "the 'for' construct"),
    ("case x in x) ls;; esac", "shell.uncertain", "the 'case' construct"),
    ("echo $((1+2))", "shell.uncertain", "arithmetic expansion"),
    ("echo $'\\x41'", "shell.uncertain", "$'...' quoting"),
    ("'ls", "shell.syntax", "unterminated single quote"),
    ('echo "x', "shell.syntax", "unterminated double quote"),
    ("echo $(ls", "shell.syntax", "missing ')'"),
    ("echo `ls", "shell.syntax", "unterminated backquote"),
    ("ls )", "shell.syntax", "unbalanced ')'"),
    ("ls >", "shell.syntax", "missing redirection target"),
    ("PATH=/tmp ls", "shell.env", "changing PATH"),
    ("PATH=/tmp; ls", "shell.env", "changing PATH"),
    ("LD_PRELOAD=/tmp/x.so ls", "shell.env", "setting LD_PRELOAD"),
    ("BASH_ENV=/tmp/x ls", "shell.env", "setting BASH_ENV"),
    ("X=1 IFS=/ ls", "shell.env", "setting IFS"),
    ("cat </dev/tcp/127.0.0.1/80", "shell.uncertain", "a redirection to tcp"),
    ("echo x >/dev/udp/127.0.0.1/53", "shell.uncertain", "a redirection to udp"),
    ("cat </dev/$P/127.0.0.1/80", "shell.uncertain", "computed device path"),
]

# Blacklist evasions: each must hit the blacklist of "rm" (no whitelist).
BLACKLIST_POLICY = {"shell": {"allow": True, "blacklist": ["rm"]}}
BLACKLIST_EVASIONS: list[str] = [
    "rm -rf x",
    "'r'm x",
    '"rm" x',
    "\\rm x",
    "r\\m x",
    "r''m x",
    "/bin/rm x",
    "/usr/bin/rm x",
    "/usr/bin/../bin/rm x",
    "command rm x",
    "command -p rm x",
    "exec rm x",
    "env rm x",
    "env -i FOO=1 rm x",
    "env - rm x",
    "nice -n 5 rm x",
    "timeout -s KILL 5 rm x",
    "nohup rm x",
    "xargs rm",
    "xargs -n 1 rm",
    "find . -name x -exec rm {} ;",
    "find . -execdir rm {} +",
    "sh -c 'rm x'",
    'bash -c "rm x"',
    "sh -ec 'ls; rm x'",
    "eval rm x",
    "eval 'ls; rm x'",
    "ls; rm x",
    "echo $(rm x)",
    "echo `rm x`",
    "ls | rm",
    "true && rm x",
    "(rm x)",
]

# Under a blacklist, constructs that would hide the program are refused too.
BLACKLIST_UNCERTAIN: list[str] = ["$X x", "r$X x", "$(echo rm) x", "env -S 'rm x'", 'sh -c "$CMD"']

# Commands the SHELL_POLICY allows (and that really run).
SHELL_ALLOWED: list[tuple[str, str]] = [
    ("echo hi", "hi\n"),
    ("echo 'a;b' \"c|d\" e\\&f", "a;b c|d e&f\n"),
    ("echo hi | cat", "hi\n"),
    ("true && echo ok", "ok\n"),
    ("if true; then echo yes; fi", "yes\n"),
    ("ls /nonexistent 2>/dev/null || echo missing", "missing\n"),
    ('echo "$HOME" >/dev/null; echo done', "done\n"),
    ("# a comment\necho after", "after\n"),
]
