"""Started by hugind as ``python -I -S -B /.hugind/boot.py``: runs one agent.

The guest library is imported before the agent's folder joins sys.path, so an
agent file named ``hugind.py`` cannot stand in for it. sys.path ends up as
[the agent's folder, the guest library, the standard library]; nothing of
any site-packages exists in the guest.
"""

import sys

sys.path[:0] = ["/.hugind"]
from hugind import _runner  # noqa: E402

sys.path.insert(0, "/")
_runner.main()
