"""The host's error kinds as Python exceptions (runtimes/wasm/ABI.md lists them).

An uncaught one ends the agent with ``agent.error`` named after its kind,
as a JS agent's does (``PermissionDenied: filesystem: ...``).
"""


class HostError(Exception):
    """A host op failed; ``kind`` is the host's name for why."""

    kind = "HostError"


class PermissionDenied(HostError):
    kind = "PermissionDenied"


class InvalidArgument(HostError):
    kind = "InvalidArgument"


class NotFound(HostError):
    kind = "NotFound"


class IOError_(HostError):
    kind = "IOError"


class Timeout(HostError):
    kind = "Timeout"


class LimitExceeded(HostError):
    kind = "LimitExceeded"


class ModuleError(HostError):
    kind = "ModuleError"


class Unsupported(HostError):
    kind = "Unsupported"


class InternalError(HostError):
    kind = "InternalError"


class Stalled(RuntimeError):
    """The agent waits for something no host operation can bring."""


IOError_.__name__ = IOError_.__qualname__ = "IOError"  # the host's name, as JS shows it

_BY_KIND = {cls.kind: cls for cls in HostError.__subclasses__()}


def host_error(error):
    kind = str(error.get("kind") or "HostError") if isinstance(error, dict) else "HostError"
    message = str(error.get("message") or "host call failed") if isinstance(error, dict) else str(error)
    cls = _BY_KIND.get(kind, HostError)
    exc = cls(message)
    if cls is HostError:
        exc.kind = kind
    return exc
