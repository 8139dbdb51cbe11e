"""``hugind diff``: the permission difference between two versions of an agent.

``load`` reads each side into its effective permissions, ``compare`` and
``compare_agent`` list the changes (each escalating or not), ``command`` is
what the CLI calls.
"""

from hugind.permdiff.command import diff, run_diff
from hugind.permdiff.compare import Change

__all__ = ["Change", "diff", "run_diff"]
