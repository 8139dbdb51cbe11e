"""Run ``hugind run`` command lines in this one process, each several times, and print
what each run gave, as JSON: its exit status, stdout, stderr and audit log.

The differential tests start this in a subprocess whose environment picks the
path under test (``HUGIND_RECYCLE=0``: fresh instances; ``HUGIND_RAW_FFI=0``:
wasmtime-py's public API). It calls the body of ``hugind run``
(``run_command``), the very code the executable runs, with ``sys.stdout`` and
``sys.stderr`` pointed at buffers; repeating a run in one process is what lets
the later ones start on a kept instance.

    python -m tests.differential.driver SPEC.json > RESULT.json

SPEC: ``{"repeat": N, "audit_dir": DIR, "cases": [{"name", "agent", "args", "backend", "timeout"}]}``.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path
from typing import Any


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def run_once(case: dict[str, Any], audit: Path) -> dict[str, Any]:
    from hugind.run_command import RunArgs, run_command

    out, err = io.BytesIO(), io.BytesIO()
    saved = sys.stdout, sys.stderr
    # write_through: hugind writes text (its messages) and bytes (the guest's output,
    # through .buffer) to the same stream; nothing may wait in a text buffer.
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    try:
        code: Any = run_command(
            RunArgs(
                agent=Path(case["agent"]),
                args=list(case.get("args", [])),
                audit=audit,
                backend=case.get("backend"),
                timeout=case.get("timeout"),
            )
        )
    except SystemExit as stop:
        code = stop.code
    except BaseException as exc:  # a path that raises where the other returns is a difference too
        code = f"raised {exc.__class__.__name__}: {exc}"
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
            stream.detach()
        sys.stdout, sys.stderr = saved
    return {
        "code": code,
        "stdout": _text(out.getvalue()),
        "stderr": _text(err.getvalue()),
        "audit": audit.read_text("utf-8", "backslashreplace") if audit.exists() else None,
    }


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    audit_dir = Path(spec["audit_dir"])
    audit_dir.mkdir(parents=True, exist_ok=True)
    runs: dict[str, list[dict[str, Any]]] = {}
    for case in spec["cases"]:
        runs[case["name"]] = [run_once(case, audit_dir / f"{case['name']}-{i}.jsonl") for i in range(spec["repeat"])]
    from hugind.sandbox import raw_ffi, recycle

    report = {
        "runs": runs,
        "kept_runs": recycle.stats.taken,
        "raw": raw_ffi.enabled(),
        "env": {k: os.environ.get(k) for k in ("HUGIND_RECYCLE", "HUGIND_RAW_FFI")},
    }
    sys.stdout.write(json.dumps(report))


if __name__ == "__main__":
    main()
