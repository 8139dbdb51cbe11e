"""Children as ``nobody`` on the host when hugind runs as root.

Standalone (standard library only). A child of a root-run hugind would
otherwise be uid 0 on the host: without capabilities, but a file it leaves, or
a process it reaches past the sandbox, would belong to root. Here the child's
user namespace maps its uid 0 to the host's 65534, and every granted root is
shown through an idmapped mount (``mount_setattr(MOUNT_ATTR_IDMAP)``, Linux
5.12+) with that same map: files owned by root look owned by the child and
what it creates is stored as root's, so the user's files keep their owner,
while the process itself holds nothing of root's on the host.

Only root may write such a map or idmap a mount, so both happen first, as
root; the roots are cloned as root too (a 0700 parent such as ``/root`` would
stop nobody). Then the process joins the namespace (``setns``) and drops
root's groups. The launcher imports this module and builds its view from the
clones; before bubblewrap, which can do neither, it runs as a script
(:func:`main`) that attaches the clones where bubblewrap binds them from.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":  # run as a script under -I: its own directory is not on sys.path
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
try:
    from hugind.confine import mounts
except ImportError:  # standalone: the launcher's sibling, or a script
    import mounts

NOBODY = 65534
CLONE_NEWUSER = 0x10000000
SYS_OPEN_TREE = 428
OPEN_TREE_CLONE = 1
OPEN_TREE_CLOEXEC = os.O_CLOEXEC
AT_EMPTY_PATH = 0x1000
AT_SYMLINK_NOFOLLOW = 0x100
MOUNT_ATTR_IDMAP = 0x00100000
PR_SET_PDEATHSIG = 1


def make_userns() -> int:
    """A user namespace whose uid and gid 0 are the host's 65534; returns a descriptor of it.

    A process may not widen its own map, so a short-lived child makes the namespace
    and this process (root, outside it) writes the map, as newuidmap does."""
    libc = mounts.libc()
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(ready_r)
            os.close(hold_w)
            libc.prctl(PR_SET_PDEATHSIG, 9, 0, 0, 0)
            os.write(ready_w, b"1" if libc.unshare(CLONE_NEWUSER) == 0 else b"0")
            os.read(hold_r, 1)  # held until the map is written and the namespace opened
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(hold_r)
    try:
        if os.read(ready_r, 1) != b"1":
            raise OSError(0, "cannot make a user namespace for the child")
        _write(f"/proc/{pid}/uid_map", f"0 {NOBODY} 1")
        _write(f"/proc/{pid}/gid_map", f"0 {NOBODY} 1")
        return os.open(f"/proc/{pid}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(ready_r)
        os.close(hold_w)
        os.waitpid(pid, 0)


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def clone(path: str) -> int:
    """A detached copy of the mount tree at ``path`` (not following a final link): unlike a
    path or an ``O_PATH`` descriptor, it can be attached in the mount namespace made later."""
    flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | mounts.AT_RECURSIVE | AT_SYMLINK_NOFOLLOW
    fd = mounts.libc().syscall(SYS_OPEN_TREE, mounts.AT_FDCWD, path.encode(), flags)
    if fd < 0:
        raise mounts.fail(f"open_tree({path})")
    return fd


def idmapped(path: str, userns: int) -> int:
    """:func:`clone`, shown through ``userns``'s map. Raises OSError when the file system
    cannot be idmapped."""
    fd = clone(path)
    try:
        mounts.mount_setattr("", AT_EMPTY_PATH | mounts.AT_RECURSIVE, MOUNT_ATTR_IDMAP, 0, dirfd=fd, userns=userns)
    except OSError as exc:
        os.close(fd)
        raise OSError(exc.errno, f"idmapping {path}: {os.strerror(exc.errno or 0)}") from None
    return fd


def open_grants(read: list[str], write: list[str], userns: int) -> dict[str, int]:
    """Each granted path as a detached mount tree, cloned as root.

    Writable roots must be idmapped (the child could not write root's files
    otherwise): one that cannot be is an error naming it. A read root that cannot be
    (a tree holding /proc, a file system without idmap support) is bound as it is,
    and its files are read with the permissions of others."""
    grants: dict[str, int] = {}
    for path in write:
        try:
            grants[path] = idmapped(path, userns)
        except FileNotFoundError:
            continue
        except OSError as exc:
            message = (
                f"cannot show writable root {path} to an unprivileged child: {exc.strerror}"
                " (HUGIND_CONFINE_DISABLE=nobody runs children as root without capabilities)"
            )
            raise OSError(exc.errno, message) from None
    for path in read:
        try:
            grants[path] = idmapped(path, userns)
        except FileNotFoundError:
            continue
        except OSError:
            try:
                grants[path] = clone(path)
            except OSError:
                continue  # vanished or unreachable: nothing to grant
    return grants


def enter(userns: int) -> None:
    """Join ``userns`` as its uid/gid 0 (the host's 65534), with no supplementary group."""
    if mounts.libc().setns(userns, CLONE_NEWUSER) != 0:
        raise mounts.fail("setns(user)")
    os.setgroups([])
    os.setresgid(0, 0, 0)
    os.setresuid(0, 0, 0)


STAGE = "/tmp"  # bubblewrap's own base: covered by its root, yet /oldroot/tmp after pivot_root
CLONE_NEWNS = 0x00020000
EXIT_LAUNCH_FAILED = 126


def stage_and_exec(grants: list[tuple[str, str]], argv: list[str], drop: list[str]) -> None:
    """Before bubblewrap, as root: each granted path, idmapped, attached at ``STAGE/<i>``
    (its place in ``grants``) in a mount namespace of this process's own, then this
    process becomes nobody and executes ``argv`` (bubblewrap, binding ``STAGE/<i>``).

    bubblewrap cannot map its child to another host user itself, nor idmap a mount; it
    gets both ready-made, and binds what it is handed like any path. ``drop``: variables
    this interpreter added to its own environment (PEP 538's LC_CTYPE), not passed on."""
    userns = make_userns()
    opened = open_grants(
        [p for kind, p in grants if kind == "read"], [p for kind, p in grants if kind == "write"], userns
    )
    program = os.open(argv[0], os.O_RDONLY | os.O_CLOEXEC)  # executable by root, perhaps not by nobody
    if mounts.libc().unshare(CLONE_NEWNS) != 0:
        raise mounts.fail("unshare(mount)")
    mounts.mount(None, "/", None, mounts.MS_REC | mounts.MS_PRIVATE)
    mounts.mount("tmpfs", STAGE, "tmpfs", mounts.MS_NOSUID | mounts.MS_NODEV, "mode=0755,size=64k")
    for index, (_, path) in enumerate(grants):
        fd = opened.pop(path, None)
        if fd is None:
            continue  # vanished: bubblewrap reports the missing source as it would
        target = f"{STAGE}/{index}"
        if os.path.isdir(f"/proc/self/fd/{fd}"):
            os.mkdir(target)
        else:
            os.close(os.open(target, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o600))
        mounts.move_mount(fd, target)
        os.close(fd)
    enter(userns)
    os.close(userns)
    os.execve(program, argv, {k: v for k, v in os.environ.items() if k not in drop})


def main(args: list[str]) -> None:
    """``nobody.py read|write PATH ... [drop NAME ...] -- PROGRAM ARGS``: see
    :func:`stage_and_exec`."""
    try:
        end = args.index("--") if "--" in args else len(args)
        words = list(zip(args[:end:2], args[1:end:2], strict=False))
        if end % 2 or any(kind not in ("read", "write", "drop") for kind, _ in words) or end + 1 >= len(args):
            raise OSError(0, "usage: nobody.py read|write PATH ... [drop NAME ...] -- PROGRAM [ARGS...]")
        grants = [(kind, value) for kind, value in words if kind != "drop"]
        drop = [value for kind, value in words if kind == "drop"]
        stage_and_exec(grants, args[end + 1 :], drop)
    except OSError as exc:
        message = exc.strerror or str(exc)
        os.write(2, f"hugind-confine: cannot run the child as nobody: {message}\n".encode(errors="replace"))
        os._exit(EXIT_LAUNCH_FAILED)


if __name__ == "__main__":
    main(sys.argv[1:])
