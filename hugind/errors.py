"""The exception hierarchy and the exit codes a user (or CI) can rely on.

Two families:

* ``HugindError`` and subclasses end a run. Each carries an ``exit_code`` and
  a message that names the cause; the CLI prints the message, never a
  traceback.
* ``HostCallError`` and subclasses are raised by a capability while serving a
  guest's request. They cross the ABI as data (``{"error": {"kind", "message"}}``)
  and surface in JS as a thrown ``Error`` whose ``name`` is ``kind``. They do
  not end the run unless the agent lets them propagate.
"""

from __future__ import annotations


class ExitCode:
    OK = 0
    AGENT_FAILED = 1  # the agent threw, rejected, or reported an error
    USAGE = 2  # bad command line, manifest, policy file or agent layout
    POLICY_DENIED = 3  # --strict: at least one request was denied
    LIMIT_EXCEEDED = 4  # deadline, fuel, memory or output cap hit
    TRAP = 5  # the module trapped (unreachable, out of bounds, stack overflow)
    BACKEND = 6  # the LLM backend failed (down, auth, overflow, ...)
    ENGINE = 7  # the JS engine is missing, corrupt or failed to build
    REPLAY_DIVERGED = 8  # hugind replay: the run differs from its record (agent, policy or a request)
    RECORD_INVALID = 9  # hugind replay: the record is truncated, tampered with or not a record
    NO_ANSWER = 10  # agentic: the model gave no final answer (out of turns, or an empty reply)
    CANCELLED = 130  # stopped from outside: Ctrl-C (128 + SIGINT), or its MCP client cancelled the call
    OUTPUT_CLOSED = 141  # stdout's reader left (128 + SIGPIPE, as a shell reports a tool SIGPIPE ended)
    INTERNAL = 70  # a bug in hugind itself
    OUTPUT_FAILED = 74  # the agent's output could not be written (sysexits' EX_IOERR)


class HugindError(Exception):
    """Base class of every error that ends a run with a clear message."""

    exit_code: int = ExitCode.INTERNAL
    quiet = False  # True: the exit status says it all (nothing is printed)

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(HugindError):
    exit_code = ExitCode.USAGE


class ManifestError(UsageError):
    """agent.yaml (or a workflow / policy file) is malformed."""

    def __init__(self, message: str, source: str | None = None) -> None:
        super().__init__(f"{source}: {message}" if source else message)


class EnvMissingError(UsageError):
    """A ``required`` env name of the manifest is not set on the host."""


class AgentFailed(HugindError):
    """The agent ended with an uncaught JS exception or a reported error."""

    exit_code = ExitCode.AGENT_FAILED

    def __init__(self, name: str, message: str, stack: str = "") -> None:
        text = f"{name}: {message}" if message else name
        if stack:
            text = f"{text}\n{stack.rstrip()}"
        super().__init__(text)
        self.name = name
        self.js_message = message
        self.stack = stack


class StrictDenials(HugindError):
    """``--strict``: the policy denied something during the run (see ``strict_failure``)."""

    exit_code = ExitCode.POLICY_DENIED

    @classmethod
    def counted(cls, denials: int) -> StrictDenials:
        plural = "s" if denials > 1 else ""
        return cls(f"--strict: the policy denied {denials} request{plural} during the run (see --audit)")


# Under --strict a denial decides the exit code over what the run did after it:
# the agent's own failure (an uncaught PermissionDenied is the common case), a
# limit or trap it then hit, an LLM backend failure. A run stopped from outside
# (130), a bad command line (2), a broken engine (7) or output (74, 141), a
# replay's verdict (8, 9) and hugind's own bugs (70) keep their codes: they say
# something the denial does not. README.md, "Exit codes", says the same.
STRICT_REPLACES = frozenset({ExitCode.AGENT_FAILED, ExitCode.LIMIT_EXCEEDED, ExitCode.TRAP, ExitCode.BACKEND})


def strict_failure(err: HugindError) -> StrictDenials | None:
    """Under --strict: the error a failed run ends with instead of ``err``, or None if ``err``
    stands. ``err.denials`` is set by the run (hugind.run) to the denials it saw."""
    denials = getattr(err, "denials", 0)
    if not denials or err.exit_code not in STRICT_REPLACES:
        return None
    return StrictDenials.counted(denials)


class LimitExceeded(HugindError):
    exit_code = ExitCode.LIMIT_EXCEEDED


class MemoryExhausted(LimitExceeded, AgentFailed):
    """The agent let an out-of-memory error end the run: its memory limit, hit (exit 4).

    Still an ``AgentFailed`` (the JS error's name and message are kept) for callers that
    catch the agent's own errors; the exit code is the limit's."""

    exit_code = ExitCode.LIMIT_EXCEEDED

    def __init__(self, err: AgentFailed) -> None:
        AgentFailed.__init__(self, err.name, err.js_message, err.stack)
        self.message = f"run stopped: memory limit reached (permissions.limits.memory_mb): {err.name}: {err.js_message}"
        self.args = (self.message,)


class RunCancelled(HugindError):
    """Whoever asked for the run no longer wants it (``hugind serve``: the client cancelled)."""

    exit_code = ExitCode.CANCELLED


class TrapError(HugindError):
    exit_code = ExitCode.TRAP


class EngineError(HugindError):
    exit_code = ExitCode.ENGINE


class BackendError(HugindError):
    exit_code = ExitCode.BACKEND


class OutputClosed(HugindError):
    """The reader of stdout went away (``hugind run agent | head -1``): the agent was
    stopped at its next write. Like a tool SIGPIPE ends, hugind says nothing more."""

    exit_code = ExitCode.OUTPUT_CLOSED
    quiet = True


class OutputFailed(HugindError):
    """The agent's output could not be written (a full disk, a descriptor gone bad):
    the run was stopped rather than go on with its output lost."""

    exit_code = ExitCode.OUTPUT_FAILED


class NoFinalAnswer(HugindError):
    """An agentic run ended without a final answer: ``max_turns`` ran out while the model
    still called tools, or its last reply was empty (or only echoed the tool list)."""

    exit_code = ExitCode.NO_ANSWER


class ReplayDiverged(HugindError):
    """``hugind replay``: the agent, its policy or one of its requests differs from the record."""

    exit_code = ExitCode.REPLAY_DIVERGED


class RecordInvalid(HugindError):
    """``hugind replay``: the record cannot be trusted or read (truncated, tampered, wrong format)."""

    exit_code = ExitCode.RECORD_INVALID


# --- errors that cross the ABI as data -------------------------------------


class HostCallError(Exception):
    """A capability refused or failed one guest request.

    ``kind`` becomes the JS error's ``name``. Messages must not leak host
    secrets: no env values, no absolute host paths outside allowed roots.
    """

    kind: str = "HostError"
    # Set by the policy engine once it has audited (and counted) this refusal,
    # so the dispatcher records only refusals made later, by a capability.
    recorded: bool = False

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def to_wire(self) -> dict[str, str]:
        return {"kind": self.kind, "message": self.message}


class PermissionDenied(HostCallError):
    kind = "PermissionDenied"


class InvalidArgument(HostCallError):
    """The guest sent a malformed request (wrong type, missing field)."""

    kind = "InvalidArgument"


class NotFound(HostCallError):
    kind = "NotFound"


class HostIOError(HostCallError):
    """An allowed operation failed on the host (I/O error, HTTP failure)."""

    kind = "IOError"


class Timeout(HostCallError):
    kind = "Timeout"


class LimitHit(HostCallError):
    """A per-call cap (read size, response bytes, output) was exceeded."""

    kind = "LimitExceeded"


class ModuleLoadError(HostCallError):
    """An import was refused or could not be loaded."""

    kind = "ModuleError"


class InvalidModule(UsageError):
    """A .wasm agent is malformed, too large, or imports what the host does not grant."""


class DigestMismatch(UsageError):
    """``--expect``: the agent is not the one the operator pinned."""
