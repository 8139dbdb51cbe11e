"""Resumable agentic conversations: ``$HUGIND_HOME/sessions/<id>/``.

``store`` reads and writes one session's directory, ``plan`` wires a run to
it (new or ``--resume``), ``listing`` backs ``hugind sessions``.
"""
