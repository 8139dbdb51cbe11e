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
  namespaces itself, builds the same kind of mount view (``mounts.py``),
  applies Landlock on top and drops every capability;
* always: a seccomp filter (``seccomp.py`` compiles ``seccomp_rules.py``
  with libseccomp), rlimits set by hugind's own code, an environment built
  from scratch, and a working directory resolved once per run (``cwd.py``).

:mod:`plan` turns the run's policy into one :class:`~hugind.confine.plan.ChildPlan`;
:mod:`command` turns a plan into the argv that starts the child confined.
"""
