"""Test helpers: a loopback OpenAI-compatible chat server."""
