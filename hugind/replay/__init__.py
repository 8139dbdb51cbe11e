"""Record and replay of a whole run (``hugind run --record``, ``hugind replay``).

docs/replay.md says what a record holds and what replay promises; one idea
per module: the file format (format.py), writing (writer.py) and reading
(reader.py) it, what never enters it (scrub.py), the run's header
(header.py), the recording and replaying tapes (tape.py), the dispatcher
seam (dispatch.py), the WASI clock/random/stdin interposer (wasi.py), the
loop's LLM and MCP seam (loop.py), the audit seam (audit.py), the run
observer that puts a tape at every seam (observer.py) and the two commands
(command.py).
"""
