"""asyncio gets hugind's event loop policy when the agent first imports it.

Importing asyncio costs the interpreter ~400 ms on WASI: an agent that never
uses it must not pay for it. A finder placed first on sys.meta_path sees the
import of ``asyncio``, lets the standard finder load it, and sets the policy
right after, before the agent's code can ask for a loop.
"""

import sys


class _AsyncioLoader:
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        from hugind import _loop

        _loop.install()


class _AsyncioFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        if fullname != "asyncio":
            return None
        sys.meta_path.remove(cls)  # once: the next lookups are the standard ones
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        if spec is not None and spec.loader is not None:
            spec.loader = _AsyncioLoader(spec.loader)
        return spec


def install():
    if "asyncio" in sys.modules:
        from hugind import _loop

        _loop.install()
    else:
        sys.meta_path.insert(0, _AsyncioFinder)
