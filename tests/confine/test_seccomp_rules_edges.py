"""The seccomp table row by row, and the filter libseccomp compiles from it, in the kernel.

Two halves. The table (``seccomp_rules._rows``) is read through a small
evaluator of its own conditions, so each row's exact argument, operator,
value, mask and errno is checked on the calls that should and should not
match it (a setuid ``chmod`` but not a plain one, ``socket(AF_NETLINK)`` but not
``AF_INET6``...). Then ``compile_rules`` builds the real BPF program in this
process, a forked child loads it (the launcher's own ``load_filter``) and makes
the calls: each refused one returns the row's errno, each allowed one what the
kernel gives its harmless arguments, and the child reports every result.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform

import pytest

from hugind.confine import seccomp_rules as rules
from hugind.confine.seccomp_rules import AF_INET, AF_INET6, AF_UNIX, CLONE_NEW, LOW_32, S_ISGID, S_ISUID


def table() -> list[rules.Row]:
    """Built anew at each use (not at import): a mutation tester activates its mutant after
    the test modules are imported."""
    return rules._rows()


def refusal(name: str, *args: int) -> str | None:
    """The errno the table gives ``name(args)``: the first row whose conditions all hold."""
    for call, err, conditions, _reason in table():
        if call != name:
            continue
        held = True
        for index, op, value, *mask in conditions:
            arg = args[index] if index < len(args) else 0
            held &= {
                "eq": arg == value,
                "ne": arg != value,
                "gt": arg > value,
                "masked_eq": (arg & (mask[0] if mask else 0)) == value,
            }[op]
        if held:
            return err
    return None


def test_the_table_is_what_the_function_builds():
    assert tuple(table()) == rules.RULES
    assert all(len(row) == 4 and row[3] for row in table())  # every row says why


@pytest.mark.parametrize("name", [name for name, _ in rules._PLAIN])
def test_plain_rows_refuse_the_call_whatever_its_arguments(name):
    rows = [row for row in table() if row[0] == name]
    assert rows == [(name, "EPERM", (), dict(rules._PLAIN)[name])]


@pytest.mark.parametrize(("name", "arg"), rules._SETID_MODE)
def test_setid_rows_read_the_mode_argument(name, arg):
    rows = [row for row in table() if row[0] == name]
    assert rows == [
        (name, "EPERM", ((arg, "masked_eq", S_ISUID, S_ISUID),), "a setuid file would be real on the host"),
        (name, "EPERM", ((arg, "masked_eq", S_ISGID, S_ISGID),), "a setgid file would be real on the host"),
    ]
    mode = [0] * 4
    for bits, expected in ((0o755, None), (0o4755, "EPERM"), (0o2755, "EPERM"), (0o6000, "EPERM"), (0o1777, None)):
        mode[arg] = bits
        assert refusal(name, *mode) == expected, (name, oct(bits))


def test_namespace_flags_of_clone_are_refused_one_by_one():
    assert refusal("clone", 0x11) is None  # fork(): SIGCHLD only
    assert refusal("clone", 0x80) is None  # CLONE_NEWTIME's bit is clone()'s exit signal
    for flag, value in CLONE_NEW.items():
        assert refusal("clone", value | 0x11) == "EPERM", flag
        assert (("clone", "EPERM", ((0, "masked_eq", value, value),), f"{flag}: a new namespace")) in table()
    assert len([row for row in table() if row[0] == "clone"]) == len(CLONE_NEW) == 7


def test_calls_whose_arguments_the_filter_cannot_read_fall_back():
    assert refusal("openat2") == "ENOSYS"
    assert refusal("clone3") == "ENOSYS"
    assert [row[1:3] for row in table() if row[0] in ("openat2", "clone3")] == [("ENOSYS", ())] * 2


def test_prlimit_only_on_itself():
    assert refusal("prlimit64", 0) is None
    assert refusal("prlimit64", 1) == "EPERM"
    assert refusal("prlimit64", 4242) == "EPERM"


def test_terminal_injection_ioctls_are_matched_on_the_low_32_bits():
    tiocsti, tioclinux = 0x5412, 0x541C
    for request in (tiocsti, tioclinux, (1 << 32) | tiocsti, (0xFFFF << 32) | tioclinux):
        assert refusal("ioctl", 3, request) == "EPERM", hex(request)
    for request in (0x5413, 0x5411, 0x541B, 0x541D, 0):  # TIOCGWINSZ and the neighbours
        assert refusal("ioctl", 3, request) is None, hex(request)
    assert LOW_32 == 0xFFFFFFFF


@pytest.mark.parametrize("call", ["socket", "socketpair"])
def test_address_families_outside_unix_inet_inet6_are_refused(call):
    for family in (AF_UNIX, AF_INET, AF_INET6):
        assert refusal(call, family) is None, family
    for family in (0, 3, 4, 9, 11, 16, 17, 40, 44):  # AF_UNSPEC .. netlink, packet, vsock, xdp
        assert refusal(call, family) == "EAFNOSUPPORT", family
    reasons = {row[3] for row in table() if row[0] == call}
    assert reasons == {"AF_UNSPEC", "family outside unix, inet, inet6"}


# --- the compiled filter, in the kernel ------------------------------------------------------

NR = {  # x86_64
    "socket": 41,
    "unshare": 272,
    "fchmodat": 268,
    "prlimit64": 302,
    "openat2": 437,
    "clone3": 435,
    "ioctl": 16,
    "keyctl": 250,
}
AF_NETLINK, SOCK_RAW, SOCK_STREAM = 16, 3, 1
AT_FDCWD = -100


def _attempts(path: str, pipe_fd: int) -> dict[str, str]:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def call(name: str, *args: int) -> str:
        ctypes.set_errno(0)
        ret = libc.syscall(NR[name], *(ctypes.c_long(a) for a in args))
        if ret < 0:
            return errno.errorcode[ctypes.get_errno()]
        if name == "socket":
            os.close(ret)
        return "OK"

    name = ctypes.create_string_buffer(path.encode())  # kept alive across the calls
    where = ctypes.addressof(name)
    return {
        "socket netlink": call("socket", AF_NETLINK, SOCK_RAW, 0),
        "socket inet": call("socket", AF_INET, SOCK_STREAM, 0),
        "socket inet6": call("socket", AF_INET6, SOCK_STREAM, 0),
        "unshare 0": call("unshare", 0),
        "chmod setuid": call("fchmodat", AT_FDCWD, where, 0o4755),
        "chmod plain": call("fchmodat", AT_FDCWD, where, 0o755),
        "prlimit other": call("prlimit64", 0x3FFFFFF0, 4096, 0, 0),
        "prlimit self": call("prlimit64", 0, 4096, 0, 0),
        "openat2": call("openat2", AT_FDCWD, 0, 0, 0),
        "clone3": call("clone3", 0, 0),
        "ioctl TIOCSTI": call("ioctl", pipe_fd, 0x5412, 0),
        "ioctl TIOCSTI high bits": call("ioctl", pipe_fd, (1 << 32) | 0x5412, 0),
        "ioctl TIOCGWINSZ": call("ioctl", pipe_fd, 0x5413, 0),
        "keyctl": call("keyctl", 0, 0, 0, 0),
    }


def _in_filtered_child(program: bytes, path: str) -> dict[str, str]:
    from hugind.confine.launcher import load_filter

    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: load, try, report one JSON line, never return into pytest
        try:
            os.close(read)
            load_filter(program)
            report = {"loaded": True, **_attempts(path, write)}
        except BaseException as exc:
            report = {"loaded": False, "error": repr(exc)}
        os.write(write, json.dumps(report).encode())
        os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return json.loads(b"".join(chunks))


@pytest.fixture(scope="module")
def compiled():
    from hugind.confine import seccomp

    if platform.machine() != "x86_64":
        pytest.skip("the syscall numbers here are x86_64's")
    try:  # the binding itself, not available(): that is under test
        import pyseccomp  # noqa: F401
    except (ImportError, OSError, RuntimeError) as exc:
        pytest.skip(f"libseccomp binding unavailable: {exc}")
    return seccomp


def test_the_compiled_filter_gives_each_row_its_errno_in_the_kernel(compiled, tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    program = compiled.compile_rules(tuple(table()))
    assert program and len(program) % 8 == 0
    report = _in_filtered_child(program, str(target))
    assert report.pop("loaded") is True, report
    assert report == {
        "socket netlink": "EAFNOSUPPORT",
        "socket inet": "OK",
        "socket inet6": "OK",
        "unshare 0": "EPERM",
        "chmod setuid": "EPERM",
        "chmod plain": "OK",
        "prlimit other": "EPERM",
        "prlimit self": "EINVAL",  # the kernel reached: a resource number that does not exist
        "openat2": "ENOSYS",
        "clone3": "ENOSYS",
        "ioctl TIOCSTI": "EPERM",
        "ioctl TIOCSTI high bits": "EPERM",
        "ioctl TIOCGWINSZ": "ENOTTY",  # the kernel reached: a pipe is no terminal
        "keyctl": "EPERM",
    }
    assert oct(target.stat().st_mode & 0o7777) == "0o755"  # the plain chmod ran, the setuid one did not


def test_without_the_filter_the_same_calls_reach_the_kernel(compiled, tmp_path):
    """The control: an empty table compiles to a filter that allows all, and none of the calls
    above gets a filter's errno (so the errnos above are the filter's, not the kernel's)."""
    target = tmp_path / "file"
    target.write_text("x")
    report = _in_filtered_child(compiled.compile_rules(()), str(target))
    assert report.pop("loaded") is True, report
    assert report["unshare 0"] == "OK"
    assert report["openat2"] != "ENOSYS" and report["clone3"] != "ENOSYS"
    assert report["prlimit other"] == "ESRCH"
    assert report["ioctl TIOCSTI"] == "ENOTTY"
    assert report["keyctl"] not in ("EPERM", "ENOSYS")
    assert report["socket netlink"] in ("OK", "EPERM")  # root may open one; never the filter's errno


def test_a_row_the_library_cannot_resolve_is_left_out(compiled):
    with_unknown = (("no_such_syscall_here", "EPERM", (), "test"), ("keyctl", "EPERM", (), "test"))
    assert compiled.compile_rules(with_unknown) == compiled.compile_rules(with_unknown[1:])
    assert compiled.compile_rules(with_unknown[1:]) != compiled.compile_rules(())


def test_a_syscall_newer_than_the_library_is_filtered_by_its_kernel_number(compiled):
    import pyseccomp

    class OlderLibrary:  # the installed binding, but not knowing the late syscalls' names
        Arch = pyseccomp.Arch

        @staticmethod
        def resolve_syscall(arch, name):
            return -1 if name in compiled.LATE_SYSCALLS else pyseccomp.resolve_syscall(arch, name)

    for name, number in compiled.LATE_SYSCALLS.items():
        known = pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)
        if known >= 0:  # where this libseccomp knows it, the table must agree with it
            assert number == known, name
        assert compiled.syscall_number(OlderLibrary, name) == number
    assert compiled.syscall_number(OlderLibrary, "no_such_syscall_here") is None


def test_the_filter_is_available_here_when_its_binding_is(compiled):
    assert compiled.available() == ""


def test_compiling_leaves_this_process_descriptors_alone(compiled):
    before = {fd: os.fstat(fd) for fd in (0, 1, 2)}
    compiled.compile_rules(tuple(table()))
    assert {fd: os.fstat(fd) for fd in (0, 1, 2)} == before


def test_the_filter_is_handed_over_in_a_sealed_memfd(compiled):
    import fcntl

    fd = compiled.filter_fd()
    assert compiled.filter_fd() == fd  # one per process
    assert compiled.filter_path() == f"/proc/{os.getpid()}/fd/{fd}"
    with open(compiled.filter_path(), "rb") as f:
        assert f.read() == compiled.program() == compiled.compile_rules()
    seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    wanted = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
    assert seals & wanted == wanted
    with pytest.raises(PermissionError):
        os.pwrite(fd, b"\0" * 8, 0)
    with pytest.raises(PermissionError):
        os.ftruncate(fd, 0)
    assert fcntl.fcntl(fd, fcntl.F_GETFD) & fcntl.FD_CLOEXEC  # not inherited by what hugind executes
    assert os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:hugind-seccomp")


def test_a_forked_copy_of_hugind_makes_its_own_memfd(compiled):
    fd = compiled.filter_fd()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            mine = compiled.filter_fd()
            with open(compiled.filter_path(), "rb") as f:
                same = f.read() == compiled.program()
            text = json.dumps({"fd": mine, "same": same, "again": compiled.filter_fd() == mine})
        except BaseException as exc:
            text = json.dumps({"error": repr(exc)})
        os.write(write, text.encode())
        os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 4096):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    child = json.loads(data)
    assert child.get("error") is None, child
    assert child["fd"] != fd and child["same"] and child["again"], child
    assert compiled.filter_fd() == fd  # the parent's is unchanged
