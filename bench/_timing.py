"""Small timing helpers shared by the benchmarks."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable


def time_call(fn: Callable[[], object], repeat: int) -> list[float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return samples


def time_command(cmd: list[str], repeat: int, cwd: str | None = None) -> list[float]:
    def once() -> None:
        subprocess.run(cmd, check=True, capture_output=True, cwd=cwd)

    once()  # warm the OS page cache and hugind's module cache
    return time_call(once, repeat)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000
