"""hugind: run untrusted LLM agents as WebAssembly modules under one policy."""

__version__ = "0.1.0"
