"""WebAssembly binary tooling: a strict reader/writer and a Wizer-style snapshotter."""
