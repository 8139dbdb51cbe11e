"""``hugind batch``: one agent over many inputs, each item in its own sandbox.

``item`` is the per-item contract (also called by the Ray runner); the other
modules are the local machinery: input parsing, the worker pool, the ordered
output writer with ``--resume``, progress and events.
"""
