"""The team bus on its own: namespaces, caps, mailboxes, summary, persistence."""

from __future__ import annotations

import pytest

from hugind.errors import InvalidArgument, LimitHit, NotFound, PermissionDenied
from hugind.team import BusLimits, TeamBus, TeamContext

MEMBERS = ["architect", "developer", "reviewer"]


@pytest.fixture
def bus() -> TeamBus:
    return TeamBus(MEMBERS)


def test_set_is_namespaced_by_writer_and_get_takes_the_full_key(bus):
    assert bus.set("architect", "spec", {"v": 1}) == "architect/spec"
    assert bus.set("architect", "architect/notes", "n") == "architect/notes"  # own prefix is accepted
    assert bus.get("architect/spec") == {"v": 1}
    assert bus.get("architect/missing") is None
    assert bus.get("nobody/spec") is None
    assert bus.all() == {"architect/notes": "n", "architect/spec": {"v": 1}}


def test_a_member_cannot_write_another_namespace(bus):
    with pytest.raises(PermissionDenied, match="'developer' may write only its own namespace"):
        bus.set("developer", "architect/spec", "forged")
    with pytest.raises(PermissionDenied):
        bus.set("developer", "developer/../architect/spec", "forged")
    assert bus.all() == {}


@pytest.mark.parametrize("key", ["", "architect/", "a\nb", "x" * 129])
def test_bad_keys_are_invalid_arguments(bus, key):
    with pytest.raises(InvalidArgument):
        bus.set("architect", key, 1)


@pytest.mark.parametrize("key", ["spec", "", "/spec"])
def test_get_requires_a_fully_qualified_key(bus, key):
    with pytest.raises(InvalidArgument, match="fully-qualified"):
        bus.get(key)


def test_value_entry_and_total_caps():
    bus = TeamBus(MEMBERS, BusLimits(max_value_bytes=100, max_memory_bytes=250, max_entries=3))
    with pytest.raises(LimitHit, match="over the 100 byte cap"):
        bus.set("architect", "big", "x" * 120)
    bus.set("architect", "a", "x" * 90)
    bus.set("architect", "b", "x" * 90)
    with pytest.raises(LimitHit, match="would exceed 250 bytes"):
        bus.set("architect", "c", "x" * 90)
    bus.set("architect", "a", "x" * 10)  # overwriting frees the old value's share
    bus.set("architect", "c", "x" * 90)
    with pytest.raises(LimitHit, match="maximum of 3 entries"):
        bus.set("architect", "d", 1)
    assert sorted(bus.all()) == ["architect/a", "architect/b", "architect/c"]


def test_send_receive_marks_read_and_broadcast_reaches_every_other_member(bus):
    bus.send("architect", "developer", "spec is ready")
    assert bus.broadcast("reviewer", "review done") == 2
    assert bus.receive("developer") == [
        {"from": "architect", "to": "developer", "content": "spec is ready"},
        {"from": "reviewer", "to": "developer", "content": "review done"},
    ]
    assert bus.receive("developer") == []
    assert bus.receive("reviewer") == []  # a broadcast does not come back to its sender
    assert bus.receive("architect") == [{"from": "reviewer", "to": "architect", "content": "review done"}]


def test_message_errors(bus):
    with pytest.raises(NotFound, match="'qa' is not a member"):
        bus.send("architect", "qa", "hi")
    with pytest.raises(InvalidArgument, match="itself"):
        bus.send("architect", "architect", "hi")
    small = TeamBus(MEMBERS, BusLimits(max_message_bytes=10, max_messages=3))
    with pytest.raises(LimitHit, match="byte cap"):
        small.send("architect", "developer", "x" * 11)
    small.send("architect", "developer", "1")
    small.send("architect", "reviewer", "2")
    with pytest.raises(LimitHit, match="maximum of 3 messages"):
        small.broadcast("reviewer", "3")  # needs two slots, one is left: nobody gets it
    small.send("reviewer", "architect", "4")
    assert len(small.messages()) == 3


def test_summary_is_markdown_grouped_by_member_in_team_order(bus):
    assert bus.summary() == "# Shared memory\n\n_No entries yet._\n"
    bus.set("reviewer", "verdict", {"ok": True})
    bus.set("architect", "spec", "line one\nline two")
    bus.set("architect", "title", "wordfreq")
    assert bus.summary() == (
        "# Shared memory\n\n"
        "## architect\n\n"
        "- **spec**:\n  line one\n  line two\n"
        "- **title**: wordfreq\n\n"
        "## reviewer\n\n"
        '- **verdict**: {"ok": true}\n'
    )


def test_summary_truncates_long_values():
    bus = TeamBus(MEMBERS, BusLimits(summary_value_chars=5))
    bus.set("architect", "k", "abcdefghij")
    assert "- **k**: abcde… (5 more characters)" in bus.summary()


def test_snapshot_and_restore_round_trip(bus):
    bus.set("architect", "spec", [1, 2])
    bus.send("architect", "developer", "one")
    bus.send("architect", "reviewer", "two")
    bus.receive("developer")
    copy = TeamBus(MEMBERS)
    copy.restore(bus.snapshot())
    assert copy.all() == {"architect/spec": [1, 2]}
    assert copy.receive("developer") == []
    assert copy.receive("reviewer") == [{"from": "architect", "to": "reviewer", "content": "two"}]


def test_context_without_a_workflow_cannot_spawn(bus):
    ctx = TeamContext("architect", bus)
    with pytest.raises(PermissionDenied, match="only available to a task of a workflow"):
        ctx.spawn({"title": "x", "description": "y", "assignee": "developer"})
    with pytest.raises(ValueError, match="not a member"):
        TeamContext("stranger", bus)
