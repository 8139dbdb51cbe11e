"""Per-format tool-call parsers; hugind.agentic.parse combines them."""
