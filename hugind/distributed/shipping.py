"""An agent on its way to Ray workers: packed once on the driver, unpacked once per node.

``ship`` puts a packed agent (``package.pack``) in Ray's object store. The
``Shipment`` (digest, name, and the object's reference inside a list, so that
Ray does not fetch the blob before the worker asks) travels with every task.
``Shipment.local_path`` on a worker returns the unpacked copy named by the
digest, fetching and unpacking the blob only the first time on that node.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import ray

from hugind.distributed.package import Packed, unpack, unpacked_path


@dataclass(frozen=True)
class Shipment:
    digest: str
    entry: str
    blob: list[Any]  # [ObjectRef]: a ref nested in a list is passed as a ref, not resolved

    def local_path(self) -> Path:
        cached = unpacked_path(self.digest)
        if cached.is_dir():
            return cached / self.entry
        return unpack(self.digest, ray.get(self.blob[0]))


def ship(packed: Packed, known: dict[str, Shipment] | None = None) -> Shipment:
    """Put a packed agent in the object store (once per digest with ``known``); needs a connection."""
    if known is not None and packed.digest in known:
        return known[packed.digest]
    shipment = Shipment(packed.digest, packed.entry, [ray.put(packed.data)])
    if known is not None:
        known[packed.digest] = shipment
    return shipment
