"""One local Ray instance for every Ray test of the session (2 CPUs, no dashboard).

Started in the test process (``ray.init``), so in-process runs use it
directly, and CLI subprocesses join it with ``--ray <its address>``. Starting
it costs ~15 s and ~1 GB on a small machine: once per session, shut down at
the end. Workers inherit this process's environment as it is when the
instance starts, hence the agents' unpack directory is set first.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def ray_address() -> Iterator[str]:
    # Before Ray is imported (it reads them then): what hugind's own --ray does for a
    # local instance: no usage reports leave the machine, every service on loopback.
    from hugind.distributed.connect import private_ray_env

    private_ray_env(local=True)
    ray = pytest.importorskip("ray", reason="the Ray tests need the 'ray' extra")
    unpack_dir = Path(tempfile.mkdtemp(prefix="hugind-ray-test-agents-"))
    os.environ["HUGIND_RAY_AGENTS_DIR"] = str(unpack_dir)
    # This process runs wasm guests too: Ray must not take their traps (see fault_handlers.py).
    from hugind.distributed.fault_handlers import fault_handlers_kept

    with fault_handlers_kept():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    try:
        yield ray.get_runtime_context().gcs_address
    finally:
        with fault_handlers_kept():
            ray.shutdown()
        os.environ.pop("HUGIND_RAY_AGENTS_DIR", None)
