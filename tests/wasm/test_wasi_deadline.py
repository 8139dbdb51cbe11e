"""WASI waits (poll_oneoff sleeps, reads of an inherited stdin) end at the run's deadline.

The guests are small WAT modules: ``_start`` makes one ``poll_oneoff`` (or
``fd_read``) and prints, in hex, its errno, the event count and the events.
A poll that ends before the deadline is compared byte for byte with the same
module run by plain wasmtime WASI (what hugind did before interposing).
"""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import wasmtime
import yaml

from hugind.errors import ExitCode, LimitExceeded
from tests.conftest import REPO, run_cli
from tests.runtime.helpers import run_captured

DEADLINE = "run stopped: wall-clock deadline exceeded (permissions.limits.timeout)"
OUTER_TIMEOUT = 30  # the whole CLI run must end well before this; the bug hung until killed
EFAULT, EINVAL = 21, 28

IN, OUT, NEV, ERRNO = 0, 1024, 2048, 6000
EVENT = 32


def clock(userdata: int, timeout_ns: int, *, clock_id: int = 1, abstime: bool = False) -> bytes:
    return struct.pack("<QB7xI4xQQH6x", userdata, 0, clock_id, timeout_ns, 0, int(abstime))


def fd_read_sub(userdata: int, fd: int) -> bytes:
    return struct.pack("<QB7xI28x", userdata, 1, fd)


def _data(at: int, blob: bytes) -> str:
    escaped = "".join(f"\\{b:02x}" for b in blob)
    return f'(data (i32.const {at}) "{escaped}")'


PREFILLED = _data(OUT, bytes([0xAA]) * 160)  # padding the real poll leaves alone stays visible
DUMP = """
  (func $dump (param $src i32) (param $len i32)
    (local $i i32) (local $b i32)
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $len)))
      (local.set $b (i32.load8_u (i32.add (local.get $src) (local.get $i))))
      (i32.store8 (i32.add (i32.const 8192) (i32.shl (local.get $i) (i32.const 1)))
        (i32.load8_u (i32.add (i32.const 8000) (i32.shr_u (local.get $b) (i32.const 4)))))
      (i32.store8 (i32.add (i32.const 8193) (i32.shl (local.get $i) (i32.const 1)))
        (i32.load8_u (i32.add (i32.const 8000) (i32.and (local.get $b) (i32.const 15)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (i32.store8 (i32.add (i32.const 8192) (i32.shl (local.get $len) (i32.const 1))) (i32.const 10))
    (i32.store (i32.const 7000) (i32.const 8192))
    (i32.store (i32.const 7004) (i32.add (i32.shl (local.get $len) (i32.const 1)) (i32.const 1)))
    (drop (call $fd_write (i32.const 1) (i32.const 7000) (i32.const 1) (i32.const 7008))))
  (data (i32.const 8000) "0123456789abcdef")
"""


def poll_guest(
    subs: bytes,
    *,
    in_ptr: int = IN,
    out_ptr: int = OUT,
    n: int | None = None,
    nev_ptr: int = NEV,
    dump_events: bool = True,
) -> bytes:
    """A WASI command: one poll_oneoff, then its errno (and count and events) in hex on stdout."""
    count = len(subs) // 48 if n is None else n
    dumps = ["(call $dump (i32.const 6000) (i32.const 4))"]
    if dump_events:
        dumps += [
            f"(call $dump (i32.const {nev_ptr}) (i32.const 4))",
            f"(call $dump (i32.const {out_ptr}) (i32.const {count * EVENT}))",
        ]
    subs_data = _data(in_ptr, subs) if in_ptr + len(subs) <= 131072 else ""
    return wasmtime.wat2wasm(f"""(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  {subs_data}
  {PREFILLED}
  {DUMP}
  (func (export "_start")
    (i32.store (i32.const {ERRNO})
      (call $poll (i32.const {in_ptr}) (i32.const {out_ptr}) (i32.const {count}) (i32.const {nev_ptr})))
    {" ".join(dumps)}))""")


READ_STDIN = wasmtime.wat2wasm(f"""(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 2)
  {DUMP}
  (func (export "_start")
    ;; two iovecs (3 bytes at 3000, 100 at 3100): the read is scattered over both
    (i32.store (i32.const 2000) (i32.const 3000)) (i32.store (i32.const 2004) (i32.const 3))
    (i32.store (i32.const 2008) (i32.const 3100)) (i32.store (i32.const 2012) (i32.const 100))
    (i32.store (i32.const {ERRNO}) (call $fd_read (i32.const 0) (i32.const 2000) (i32.const 2) (i32.const 2016)))
    (call $dump (i32.const {ERRNO}) (i32.const 4))
    (call $dump (i32.const 2016) (i32.const 4))
    (call $dump (i32.const 3000) (i32.const 3))
    (call $dump (i32.const 3100) (i32.const 4))))""")


def _agent(tmp_path: Path, wasm: bytes, name: str = "poll.wasm") -> Path:
    path = tmp_path / name
    path.write_bytes(wasm)
    return path


def _hugind_output(tmp_path: Path, wasm: bytes, **options: object) -> str:
    return run_captured(_agent(tmp_path, wasm), **options).stdout


def _plain_wasmtime_output(tmp_path: Path, wasm: bytes) -> str:
    """What the module prints under wasmtime's own WASI: the behaviour before interposing."""
    engine = wasmtime.Engine()
    store = wasmtime.Store(engine)
    wasi = wasmtime.WasiConfig()
    out = tmp_path / "plain.out"
    wasi.stdout_file = str(out)
    store.set_wasi(wasi)
    linker = wasmtime.Linker(engine)
    linker.define_wasi()
    instance = linker.instantiate(store, wasmtime.Module(engine, wasm))
    start = instance.exports(store)["_start"]
    assert isinstance(start, wasmtime.Func)
    start(store)
    return out.read_text()


def _cli(wasm_path: Path, *, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hugind", "run", str(wasm_path), "--timeout", "1"],
        input=stdin,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=OUTER_TIMEOUT,
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _errno(output: str) -> int:
    return int.from_bytes(bytes.fromhex(output.splitlines()[0]), "little")


# ---- long waits end at the deadline ------------------------------------------------


def test_sleep_past_the_deadline_is_a_timeout_cli(tmp_path):
    run = _cli(_agent(tmp_path, poll_guest(clock(7, 120 * 10**9))))
    assert run.returncode == ExitCode.LIMIT_EXCEEDED == 4
    assert run.stderr.strip() == f"hugind: error: {DEADLINE}"
    assert run.stdout == ""  # the guest never got past its sleep
    assert "Traceback" not in run.stderr


def test_sleep_past_the_deadline_in_process(tmp_path):
    with pytest.raises(LimitExceeded) as err:
        run_captured(_agent(tmp_path, poll_guest(clock(7, 120 * 10**9))), timeout=0.5)
    assert err.value.message == DEADLINE


@pytest.mark.parametrize("clock_id", [0, 1], ids=["realtime", "monotonic"])
def test_abstime_far_in_the_future_is_a_timeout(tmp_path, clock_id):
    far = 2**63 - 1  # ~292 years after either clock's origin
    run = _cli(_agent(tmp_path, poll_guest(clock(7, far, clock_id=clock_id, abstime=True))))
    assert run.returncode == 4
    assert run.stderr.strip() == f"hugind: error: {DEADLINE}"


def test_realtime_relative_sleep_is_a_timeout_too(tmp_path):
    with pytest.raises(LimitExceeded, match="wall-clock deadline exceeded"):
        run_captured(_agent(tmp_path, poll_guest(clock(7, 120 * 10**9, clock_id=0))), timeout=0.5)


def test_waiting_on_an_inherited_stdin_that_never_closes_is_a_timeout(tmp_path):
    """poll_oneoff on fd 0 and a blocking fd_read: the CLI inherits stdin; a pipe nobody writes to."""
    for wasm in (poll_guest(fd_read_sub(3, 0) + clock(4, 120 * 10**9)), READ_STDIN):
        path = _agent(tmp_path, wasm)
        with subprocess.Popen(
            [sys.executable, "-m", "hugind", "run", str(path), "--timeout", "1"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        ) as proc:
            try:
                proc.wait(timeout=OUTER_TIMEOUT)  # stdin stays open (communicate() would close it)
            except subprocess.TimeoutExpired:
                proc.kill()
                pytest.fail("the guest outlived the run's deadline waiting on stdin")
            assert proc.stdout is not None and proc.stderr is not None
            out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.returncode == 4, err
        assert err.strip() == f"hugind: error: {DEADLINE}"
        assert out == ""


def test_an_output_cap_interruption_ends_the_wait(tmp_path):
    """A guest that writes past the cap and sleeps at once (no epoch check in between)."""
    wasm = wasmtime.wat2wasm(f"""(module
      (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      {_data(0, clock(1, 120 * 10**9))}
      (data (i32.const 200) "0123456789abcdef")
      (func (export "_start")
        (i32.store (i32.const 100) (i32.const 200)) (i32.store (i32.const 104) (i32.const 16))
        (drop (call $fd_write (i32.const 1) (i32.const 100) (i32.const 1) (i32.const 108)))
        (drop (call $poll (i32.const 0) (i32.const 1024) (i32.const 1) (i32.const 2048)))))""")
    agent = tmp_path / "capped"
    agent.mkdir()
    (agent / "agent.wasm").write_bytes(wasm)
    manifest = {"name": "capped", "entry_point": "agent.wasm", "permissions": {"limits": {"max_output_bytes": 10}}}
    (agent / "agent.yaml").write_text(yaml.safe_dump(manifest))
    with pytest.raises(LimitExceeded) as err:
        run_captured(agent, timeout=60)
    assert err.value.message == "run stopped: output cap of 10 bytes exceeded"


# ---- short waits behave exactly as before ------------------------------------------


SAME_AS_BEFORE = {
    "sleep 50 ms": clock(7, 50_000_000),
    "sleep 120 ms (several slices)": clock(7, 120_000_000),
    "a long clock and one due in 80 ms": clock(7, 120 * 10**9) + clock(8, 80_000_000),
    "two clocks, the shorter fires": clock(7, 40_000_000) + clock(8, 5_000_000),
    "two clocks already due": clock(7, 0) + clock(8, 0),
    "realtime relative": clock(9, 10_000_000, clock_id=0),
    "abstime monotonic in the past": clock(7, 5, abstime=True),
    "abstime realtime in the past": clock(7, 5, clock_id=0, abstime=True),
    "CPU-time clock (refused)": clock(7, 5, clock_id=2),
    "unknown clock (refused)": clock(7, 5, clock_id=99),
    "empty stdin is readable": fd_read_sub(3, 0),
    "empty stdin and a long clock (sliced)": fd_read_sub(3, 0) + clock(4, 120 * 10**9),
    "bad fd": fd_read_sub(3, 77) + clock(4, 120 * 10**9),
    "unknown tag": struct.pack("<QB47x", 1, 5),
}


@pytest.mark.parametrize("subs", list(SAME_AS_BEFORE.values()), ids=list(SAME_AS_BEFORE))
def test_polls_that_end_before_the_deadline_are_unchanged(tmp_path, subs):
    wasm = poll_guest(subs)
    assert _hugind_output(tmp_path, wasm, timeout=30) == _plain_wasmtime_output(tmp_path, wasm)


def test_sleep_50ms_cli_completes(tmp_path):
    wasm = poll_guest(clock(0x1122334455667788, 50_000_000))
    run = _cli(_agent(tmp_path, wasm))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[:3] == [
        "00000000",
        "01000000",
        f"8877665544332211{'0000' + '00' + 'aa' * 5}{'00' * 10}{'aa' * 6}",
    ]


def test_stdin_data_ends_the_waits(tmp_path):
    """The interposed fd_read returns what arrived, scattered over the iovecs; the poll reports it."""
    run = _cli(_agent(tmp_path, READ_STDIN), stdin="hello")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[:4] == ["00000000", "05000000", b"hel".hex(), b"lo".hex() + "0000"]
    run = _cli(_agent(tmp_path, poll_guest(fd_read_sub(3, 0) + clock(4, 120 * 10**9))), stdin="hello")
    assert run.returncode == 0, run.stderr
    errno, count, event = run.stdout.splitlines()[:3]
    assert (errno, count) == ("00000000", "01000000")
    assert event[:22] == "0300000000000000" + "0000" + "01"  # userdata 3, no error, fd_read


# ---- hostile pointers and counts ---------------------------------------------------------


HOSTILE = {
    "no subscriptions": (dict(n=0), EINVAL),
    "subscriptions past the end of memory": (dict(in_ptr=131072 - 40), EFAULT),
    "events past the end of memory": (dict(out_ptr=131072 - 16), EFAULT),
    "count past the end of memory": (dict(nev_ptr=131072), EFAULT),
    "count of 2^31": (dict(n=2**31 - 1), EFAULT),
    "count of -1": (dict(n=-1), EFAULT),
    "misaligned subscriptions": (dict(in_ptr=4), EINVAL),
    "misaligned events": (dict(out_ptr=1028), EINVAL),
    "misaligned count": (dict(nev_ptr=2049), EINVAL),
    "events over the subscriptions": (dict(out_ptr=IN), EINVAL),
}


@pytest.mark.parametrize("args,errno", list(HOSTILE.values()), ids=list(HOSTILE))
def test_hostile_pointers_get_an_errno(tmp_path, args, errno):
    wasm = poll_guest(clock(7, 120 * 10**9), dump_events=False, **args)
    assert _errno(_hugind_output(tmp_path, wasm, timeout=30)) == errno


def test_hostile_pointers_cli_no_traceback(tmp_path):
    run = run_cli(
        "run", str(_agent(tmp_path, poll_guest(clock(7, 1), n=2**31 - 1, dump_events=False))), timeout=OUTER_TIMEOUT
    )
    assert run.code == 0, run.stderr
    assert _errno(run.stdout) == EFAULT
    assert "Traceback" not in run.stderr
