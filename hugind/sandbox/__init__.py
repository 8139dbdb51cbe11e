"""wasmtime plumbing: engines and their module cache, guest instances, the
ABI marshalling and the event loop that drives a guest's async work."""
