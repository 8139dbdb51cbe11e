"""OS-level confinement of the processes hugind starts for an agent.

Shell commands, spawned programs and MCP stdio servers are ordinary host
processes: the policy decides *which* program runs, and this package makes
the kernel hold the rest of the policy around it (what it can read and
write, whether it has a network, what it can see of other processes, how
much it may consume). Layers, each used when the machine offers it:

* ``bwrap`` (bubblewrap): user, PID, network, IPC and UTS namespaces, a
  mount view holding only the policy's roots and the system directories, a
  private ``/tmp``, a fresh ``/proc``, a new session, death with its parent;
* without bwrap: a small launcher (``launcher.py``) that unshares the same
  namespaces itself (no mount view) and applies Landlock for the filesystem;
* always: rlimits and an environment built from scratch.

:mod:`plan` turns the run's policy into one :class:`~hugind.confine.plan.ChildPlan`;
:mod:`command` turns a plan into the argv that starts the child confined.
"""
