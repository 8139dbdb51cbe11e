"""The system calls a confined child may not make: data only, a reason per row.

Read by :mod:`hugind.confine.seccomp`, which compiles these rows with libseccomp.
Everything not named here is allowed: the filter removes kernel surface a
command never needs, or that would reach past the sandbox's other layers; the
files, the network and the processes a command sees are still held by the
mount view / Landlock and the namespaces.

A row is ``(syscall, errno, conditions, reason)``. ``conditions`` are
``(argument, op, value[, mask])`` with op one of ``eq``, ``ne``, ``gt``,
``masked_eq`` (``(arg & mask) == value``); several are all required. The
errno is what the caller sees: ``EPERM`` for refused, ``ENOSYS`` where a libc
falls back to an older call, ``EAFNOSUPPORT`` for an address family.
"""

from __future__ import annotations

S_ISUID = 0o4000
S_ISGID = 0o2000
# clone()'s namespace flags (CLONE_NEWTIME is 0x80, which clone() reads as the exit signal).
CLONE_NEW = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
TIOCSTI = 0x5412
TIOCLINUX = 0x541C
LOW_32 = 0xFFFFFFFF

Condition = tuple  # (argument, op, value) or (argument, "masked_eq", value, mask)
Row = tuple[str, str, tuple[Condition, ...], str]

_PLAIN: list[tuple[str, str]] = [
    # Other processes: the worker's socket to hugind, its memory, the next command's pipes.
    ("ptrace", "a command could read or drive its worker or a sibling process"),
    ("process_vm_readv", "reads another process's memory"),
    ("process_vm_writev", "writes another process's memory"),
    ("pidfd_open", "a handle on another process, first step of pidfd_getfd"),
    ("pidfd_getfd", "steals a descriptor (the worker's socket to hugind) from another process"),
    ("kcmp", "compares other processes' descriptors and memory"),
    # The kernel keyring is not namespaced: keys of the host's user are reachable.
    ("keyctl", "kernel keyring is shared with the host user"),
    ("add_key", "kernel keyring is shared with the host user"),
    ("request_key", "kernel keyring is shared with the host user"),
    # Large kernel surfaces with a history of privilege escalations; no command needs them.
    ("bpf", "eBPF programs and maps"),
    ("userfaultfd", "used to win kernel races (CVE-2016-5195 style exploits)"),
    ("perf_event_open", "kernel profiling: information leaks and exploits"),
    ("io_uring_setup", "io_uring makes sockets and opens files without the filtered calls"),
    ("io_uring_enter", "io_uring makes sockets and opens files without the filtered calls"),
    ("io_uring_register", "io_uring makes sockets and opens files without the filtered calls"),
    # The mount view and the namespaces are made once, by bubblewrap or the launcher.
    ("mount", "would change the sandbox's view"),
    ("umount2", "would uncover what the view hides"),
    ("mount_setattr", "would make a read-only mount writable"),
    ("fsopen", "new mount API"),
    ("fsconfig", "new mount API"),
    ("fsmount", "new mount API"),
    ("fspick", "new mount API"),
    ("move_mount", "new mount API"),
    ("open_tree", "new mount API: clones a mount"),
    ("pivot_root", "would change the sandbox's root"),
    ("chroot", "would change the sandbox's root"),
    ("unshare", "a new namespace escapes the run's PID namespace and its kill"),
    ("setns", "would join another namespace"),
    ("name_to_handle_at", "file handles open files past the view (the 'shocker' escape)"),
    ("open_by_handle_at", "file handles open files past the view (the 'shocker' escape)"),
    # Machine-wide administration (each needs a capability the child lacks; refused first here).
    ("kexec_load", "loads a new kernel"),
    ("kexec_file_load", "loads a new kernel"),
    ("init_module", "loads kernel code"),
    ("finit_module", "loads kernel code"),
    ("delete_module", "unloads kernel code"),
    ("acct", "process accounting for the whole machine"),
    ("swapon", "machine swap"),
    ("swapoff", "machine swap"),
    ("reboot", "reboots the machine"),
    ("syslog", "reads the kernel log"),
    ("quotactl", "disk quotas"),
    ("iopl", "raw I/O ports"),
    ("ioperm", "raw I/O ports"),
    ("uselib", "obsolete loader call"),
    ("vhangup", "hangs up the terminal"),
]

_SETID_MODE = [
    # A file a child makes is owned by the user hugind runs as (root, often): a setuid or
    # setgid bit on it would be a privilege on the host once the run is over.
    ("chmod", 1),
    ("fchmod", 1),
    ("fchmodat", 2),
    ("fchmodat2", 2),
    ("creat", 1),
    ("open", 2),
    ("openat", 3),
    ("mknod", 1),
    ("mknodat", 2),
]


def _rows() -> list[Row]:
    rows: list[Row] = [(name, "EPERM", (), reason) for name, reason in _PLAIN]
    for name, arg in _SETID_MODE:
        for bit, label in ((S_ISUID, "setuid"), (S_ISGID, "setgid")):
            rows.append((name, "EPERM", ((arg, "masked_eq", bit, bit),), f"a {label} file would be real on the host"))
    rows.append(("openat2", "ENOSYS", (), "its mode is in a struct the filter cannot read; libc falls back to openat"))
    rows.append(("clone3", "ENOSYS", (), "its flags are in a struct the filter cannot read; libc falls back to clone"))
    for flag, value in CLONE_NEW.items():
        rows.append(("clone", "EPERM", ((0, "masked_eq", value, value),), f"{flag}: a new namespace"))
    rows.append(
        ("prlimit64", "EPERM", ((0, "ne", 0),), "another process's limits: the zygote's, or the next command's worker")
    )
    for request, name in ((TIOCSTI, "TIOCSTI"), (TIOCLINUX, "TIOCLINUX")):
        rows.append(("ioctl", "EPERM", ((1, "masked_eq", request, LOW_32),), f"{name} types into a terminal"))
    # Address families: unix, inet and inet6 only (netlink, packet, vsock... are kernel surface).
    for call in ("socket", "socketpair"):
        rows.append((call, "EAFNOSUPPORT", ((0, "eq", 0),), "AF_UNSPEC"))
        for family in range(AF_INET + 1, AF_INET6):
            rows.append((call, "EAFNOSUPPORT", ((0, "eq", family),), "family outside unix, inet, inet6"))
        rows.append((call, "EAFNOSUPPORT", ((0, "gt", AF_INET6),), "family outside unix, inet, inet6"))
    return rows


RULES: tuple[Row, ...] = tuple(_rows())
