"""A team member's shared memory, messages and tasks (``hugind team``; docs/teams.md).

The same ``team.*`` ops as a JS member's ``memory``, ``messages`` and
``tasks``; outside a team they are not available (``hugind.Unsupported``).
Values come back as Python objects where JS returns their JSON text.
"""

from hugind._ops import call


def memory_set(key, value):
    call("team.memory_set", {"key": str(key), "value": value})


def memory_get(key):
    return call("team.memory_get", {"key": str(key)})


def memory_all():
    return call("team.memory_all")


def memory_summary():
    return call("team.memory_summary")


def send(to, content):
    call("team.send", {"to": str(to), "content": str(content)})


def broadcast(content):
    call("team.broadcast", {"content": str(content)})


def receive():
    """The messages waiting for this member: [{"from", "content", ...}]."""
    return call("team.receive")


def spawn_task(spec):
    return call("team.spawn_task", {"task": spec})
