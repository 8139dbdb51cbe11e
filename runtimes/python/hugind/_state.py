"""What the start message told the guest: its input and the run's facts."""

input = {}  # {"args": [...], "meta": {...}} (and "team" in a team)
args = []
meta = {}
version = "unknown"
mode = "script"
entry = ""


def set_up(msg):
    global input, args, meta, version, mode, entry
    input = msg.get("input") or {}
    args = list(input.get("args") or [])
    meta = dict(input.get("meta") or {})
    version = str(msg.get("version") or "unknown")
    mode = str(msg.get("mode") or "script")
    entry = str(msg.get("entry") or "")
    import sys

    sys.argv = ["/" + entry, *args]
