"""Each run starts from a fresh instance: nothing one run left in its globals
or its heap is visible to the next, in JS or in the linear memory itself."""

from __future__ import annotations

import ctypes

from hugind.manifest import load_agent
from hugind.run import RunOptions, make_policy, open_session, run_agent

MARKER = "hugind-isolation-marker-5f1c2a"

WRITER = f"""
globalThis.kept = "{MARKER}-global";
const parts = [];
for (let i = 0; i < 64; i++) parts.push("{MARKER}-heap-" + i);
globalThis.heap = parts.join("|");
export default () => globalThis.kept.length + globalThis.heap.length;
"""

READER = """
export default () => ({ kept: globalThis.kept ?? null, heap: globalThis.heap ?? null, seed: Math.random() });
"""


def _options() -> RunOptions:
    sink: list[bytes] = []
    return RunOptions(stdout=sink.append, stderr=sink.append, host_env={})


def test_a_run_sees_no_global_of_the_run_before(make_agent):
    writer = load_agent(make_agent({"main.js": WRITER}))
    reader = load_agent(make_agent({"main.js": READER}))
    assert run_agent(writer, _options()).value > 64 * len(MARKER)
    first = run_agent(reader, _options()).value
    assert first["kept"] is None and first["heap"] is None
    run_agent(writer, _options())
    second = run_agent(reader, _options()).value
    assert second["kept"] is None and second["heap"] is None
    assert first["seed"] != second["seed"]  # Math.random is seeded per instance


def _memory_after_run(agent, options: RunOptions) -> bytes:
    """The guest's whole linear memory once its run has finished."""
    policy = make_policy(agent, options)
    session = open_session(agent, options, policy, {}, {})
    try:
        session.run_main()
        guest = session.instance
        size = guest.memory.data_len(guest.store)
        return ctypes.string_at(ctypes.addressof(guest.memory.data_ptr(guest.store).contents), size)
    finally:
        session.close()
        policy.close()
        policy.audit.close()


def test_the_next_instances_memory_holds_no_byte_of_the_last_runs_heap(make_agent):
    writer = load_agent(make_agent({"main.js": WRITER}))
    reader = load_agent(make_agent({"main.js": READER}))
    options = _options()
    assert MARKER.encode() in _memory_after_run(writer, options)  # the scan finds what a run wrote
    for _ in range(3):  # several runs, so a reused memory slot would have been reused
        run_agent(writer, options)
    assert MARKER.encode() not in _memory_after_run(reader, options)
