"""Warm start: ``hugind run`` served by a pre-imported process of the same user.

A cold ``hugind run`` spends most of its wall time starting Python and
importing wasmtime's bindings, YAML and the run's own modules, before any
agent code runs. A *warm server* pays that once: a detached process that has
imported everything a run needs and, per request, forks a child that becomes
the ``hugind run`` the user typed (argv, environment, working directory,
umask, standard streams). The server itself never runs an agent, so every
run still starts from a clean copy of the same freshly imported process.

The security rule is that the warm path must not be a road out of any
confinement the caller is in. See ``docs/design.md`` ("Warm start") for the
whole argument; in short, a run is served only when client and server prove
to each other that they are the same user in the same confinement:

* the socket is an abstract Unix socket: a command hugind confines cannot
  reach it (bubblewrap gives it its own network namespace; hugind's Landlock
  launcher scopes abstract sockets);
* each side compares the other's namespaces, cgroup, credentials,
  capabilities, seccomp and no-new-privs state, LSM label, root directory,
  resource limits, niceness and scheduling with its own, and refuses any
  difference (``peer.py``);
* each side proves it may inspect the other (``ptrace`` read access, which a
  Landlock domain only grants inside itself) by opening a file the other holds
  through ``/proc/PID/fd`` (``peer.py``).

Anything unusual (a refusal, a stale server, a request too large, stdio
closed, ``--strict``, ``HUGIND_WARM=0``) runs the command in the calling
process instead, as before; the caller never notices but for the time.

Modules: ``key`` (which server a client may use), ``peer`` (the context
check and the proof), ``wire`` (messages), ``client``, ``server``, ``child``
(what a forked child does before it becomes the run) and ``spawn``.
"""
