"""Least-privilege learning: collect what a run used, write the tightest preset for it.

``collector`` gathers every allowed policy decision through the engine's
hook, ``derive`` turns them into a preset, ``render`` writes it as commented
YAML (atomically), ``command`` is what ``hugind run --learn`` calls.
"""

from hugind.learn.collector import Usage, UsageCollector
from hugind.learn.derive import Learned, derive

__all__ = ["Learned", "Usage", "UsageCollector", "derive"]
