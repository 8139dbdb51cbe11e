"""Files, through the host's ``fs.*`` ops: every call is checked by the run's policy.

Paths are the agent's (relative ones start at the policy's fs cwd, the agent
folder), exactly as for a JS agent's ``fs``.
"""

import binascii

from hugind._ops import call


def cwd():
    return call("fs.cwd")


def exists(path):
    return call("fs.exists", {"path": path})


def is_file(path):
    return call("fs.is_file", {"path": path})


def is_dir(path):
    return call("fs.is_dir", {"path": path})


def realpath(path):
    return call("fs.realpath", {"path": path})


def read_text(path):
    return call("fs.read_text", {"path": path})


def read_bytes(path):
    return binascii.a2b_base64(call("fs.read_bytes", {"path": path, "encoding": "base64"}))


def write_text(path, data):
    call("fs.write_text", {"path": path, "data": str(data)})


def append_text(path, data):
    call("fs.append_text", {"path": path, "data": str(data)})


def write_bytes(path, data):
    if isinstance(data, str):
        call("fs.write_bytes", {"path": path, "data": data})
    else:  # base64: a third more text than the bytes, where a JSON list is three to four times
        call("fs.write_bytes", {"path": path, "data_base64": binascii.b2a_base64(bytes(data), newline=False).decode()})


def list_dir(path="."):
    """The sorted names in a directory (a list, where JS's fs.list_dir returns its JSON)."""
    return call("fs.list_dir", {"path": path})


def mkdir(path, recursive=False):
    call("fs.mkdir", {"path": path, "recursive": bool(recursive)})


def remove(path, recursive=False):
    call("fs.remove", {"path": path, "recursive": bool(recursive)})


def rename(src, dst):
    call("fs.rename", {"src": src, "dst": dst})


def copy(src, dst):
    call("fs.copy", {"src": src, "dst": dst})


def stat(path):
    """{size, is_file, is_dir, is_symlink, mtime, mode} (a dict, where JS returns its JSON)."""
    return call("fs.stat", {"path": path})
