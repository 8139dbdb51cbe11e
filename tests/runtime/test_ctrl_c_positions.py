"""Ctrl-C at every point of a host call: raised where it becomes a trap, deferred elsewhere.

Python runs the SIGINT handler wherever the main thread next runs bytecode, so a
KeyboardInterrupt can be raised in any frame of a host call: wasmtime-py's
``Caller(...)``, hugind's handler, the code that makes the trap. Raised where the
ctypes callback does not catch it, it escapes into wasmtime and the process dies
(seen in CI: SIGSEGV, one Ctrl-C in ~30 on a loop of host calls). A real signal
lands at one point chosen by timing; here a trace function asks ctrl_c's rule at
each point in turn, one point per guest call, and raises where the rule says the
SIGINT handler would. Every call must then end either with the KeyboardInterrupt
(trapped and re-raised) or, deferred, with the import's own result, and nothing
may escape a ctypes callback (``sys.unraisablehook``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from hugind import ctrl_c
from tests.conftest import REPO

CALLBACKS = {tuple(where) for where in ctrl_c._CALLBACKS}

HARNESS = r"""
import json, sys
import wasmtime
from hugind import ctrl_c
from hugind.sandbox import raw_import

# What escaped a ctypes callback into wasmtime. (A KeyboardInterrupt in a half-made
# wasmtime-py object's __init__ also makes its __del__ fail: noise, not an escape.)
unraisable = []
def hook(u):
    if "ctypes callback" in (u.err_msg or ""):
        unraisable.append(f"{u.err_msg}: {u.exc_value!r}")
sys.unraisablehook = hook

def work(n):
    total = 0
    for i in range(n):
        total += i
    return total

def handler(caller, a, b):
    return work(a) + b

WAT = '''(module
  (import "hugind" "ping" (func $ping (param i32 i32) (result i32)))
  (func (export "run") (param i32) (result i32)
    (call $ping (local.get 0) (i32.const 7))))'''

engine = wasmtime.Engine()
store = wasmtime.Store(engine)
linker = wasmtime.Linker(engine)
raw_import.define(linker, "hugind", "ping", 2, handler)
run = linker.instantiate(store, wasmtime.Module(engine, WAT)).exports(store)["run"]
expected = work(5) + 7

def _in_del(frame):
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False

def attempt(point):
    seen = {"count": 0, "verdict": None, "where": None, "in_del": False}
    def tracer(frame, event, arg):
        seen["count"] += 1
        if seen["count"] == point:
            seen["where"] = ctrl_c._where(frame)
            seen["in_del"] = _in_del(frame)
            if ctrl_c._may_raise(frame):
                seen["verdict"] = "raised"
                raise KeyboardInterrupt
            seen["verdict"] = "deferred"
        return tracer
    sys.settrace(tracer)
    try:
        got = run(store, 5)
        ended = "result" if got == expected else f"wrong result {got}"
    except KeyboardInterrupt:
        ended = "interrupt"
    except (wasmtime.Trap, wasmtime.WasmtimeError) as trap:
        failure = raw_import.take_failure()
        ended = "interrupt" if isinstance(failure, KeyboardInterrupt) else f"trap {trap} {failure!r}"
    finally:
        sys.settrace(None)
    return seen["count"], seen["verdict"], seen["where"], seen["in_del"], ended

points = []
point = 1
while True:
    count, verdict, where, in_del, ended = attempt(point)
    if verdict is None:
        break
    points.append({"verdict": verdict, "where": where, "in_del": in_del, "ended": ended})
    point += 1
print(json.dumps({"points": points, "unraisable": unraisable}))
"""


def _allowed_ends(point: dict) -> set[str]:
    if point["verdict"] == "deferred":
        return {"result"}
    if point["in_del"]:  # Python itself swallows what a __del__ raises (the watcher still stops the guest)
        return {"interrupt", "result"}
    return {"interrupt"}


@pytest.mark.parametrize("raw", ["1", "0"], ids=["raw-import", "typed-trampoline"])
def test_every_point_of_a_host_call_ends_cleanly(raw):
    env = {**os.environ, "HUGIND_RAW_FFI": raw}
    proc = subprocess.run(
        [sys.executable, "-c", HARNESS], capture_output=True, text=True, env=env, cwd=REPO, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    points = report["points"]
    assert report["unraisable"] == [], report["unraisable"][:5]
    wrong = [p for p in points if p["ended"] not in _allowed_ends(p)]
    assert wrong == [], wrong[:5]
    raised_in_handler = [p for p in points if p["verdict"] == "raised" and p["where"][0] in ("handler", "work")]
    deferred_in_callback = [p for p in points if p["verdict"] == "deferred" and tuple(p["where"]) in CALLBACKS]
    assert raised_in_handler, "no point inside the handler raised: the rule never lets Ctrl-C stop a host call"
    assert deferred_in_callback, "no point in the ctypes callback was deferred: the harness missed it"


def test_the_rule_names_functions_that_exist():
    """ctrl_c knows callbacks and guards by name: a rename must fail here, not in a user's Ctrl-C."""
    import wasmtime

    roots = {"wasmtime": Path(wasmtime.__file__).parent, "sandbox": REPO / "hugind" / "sandbox"}
    for name, where in sorted(ctrl_c._CALLBACKS | ctrl_c._GUARDS):
        folder, file = where.split("/")
        source = (roots[folder] / file).read_text()
        assert f"def {name}(" in source, f"{where} defines no {name}(): ctrl_c's rule is out of date"
