"""fs.read_bytes and fs.write_bytes: the bytes on disk, whatever form the agent holds them in.

The host sends bytes as base64 (a list of 0..255 stays accepted) and the engine
turns them into the number[] of the JS API with native.byteList / listBytes
(fast_bytes.c), or the plain loop for a list they do not take. Every form is
checked against the file's bytes, which Python reads and writes itself.
"""

from __future__ import annotations

import json
import random

from tests.python.helpers import probe
from tests.runtime.test_web_globals import _agent, _hugind

FS = {"filesystem": {"read": ["."], "write": ["."]}}
DATA = bytes(random.Random(7).randrange(256) for _ in range(70_000)) + bytes(range(256))

WRITES = """
const payload = fs.read_bytes("data.bin");
const show = (x) => console.log(JSON.stringify(x));
show([Array.isArray(payload), payload.length, payload.slice(0, 4), typeof payload[0]]);
payload.push(7);  // an ordinary, growable array
show(payload.length);
payload.pop();
const sparse = [1, 2, 3];
sparse[5] = 4;
const writes = {
  list: payload,
  small: [0, 255, 1.0, 255.0, -0],
  uint8: Uint8Array.from(payload.slice(0, 300)),
  view: new DataView(Uint8Array.from(payload).buffer, 10, 20),
  uint16: new Uint16Array([0x0102, 0xfffe]),
  buffer: Uint8Array.from([9, 8, 7]).buffer,
  text: "caf\\u00e9",
  empty: [],
  iterable: new Set([5, 6, 7]),
};
for (const [name, data] of Object.entries(writes)) fs.write_bytes(`out_${name}.bin`, data);
const refused = {};
for (const [name, data] of Object.entries({
  big: [1, 256], negative: [-1], fraction: [1.5], nan: [NaN], string: ["1"], nulls: [null], sparse,
  object: [{ valueOf: () => 1 }], bool: [true], generator: (function* () { yield 1; yield 256; })(),
})) {
  try {
    fs.write_bytes(`bad_${name}.bin`, data);
    refused[name] = "written";
  } catch (e) {
    refused[name] = e.name + ": " + e.message;
  }
}
show(refused);
console.log("done");
"""

EXPECTED = {
    "list": DATA,
    "small": bytes([0, 255, 1, 255, 0]),
    "uint8": DATA[:300],
    "view": DATA[10:30],
    "uint16": bytes([0x02, 0x01, 0xFE, 0xFF]),  # the array's own bytes, little-endian, as node writes them
    "buffer": bytes([9, 8, 7]),
    "text": "caf\u00e9".encode(),
    "empty": b"",
    "iterable": bytes([5, 6, 7]),
}


def test_js_bytes_round_trip_in_every_form(tmp_path):
    agent = _agent(tmp_path / "agent", WRITES, FS)
    (agent / "data.bin").write_bytes(DATA)
    got = _hugind(agent)
    assert got.returncode == 0, got.stderr.decode()
    lines = got.stdout.decode().splitlines()
    assert json.loads(lines[0]) == [True, len(DATA), list(DATA[:4]), "number"]
    assert json.loads(lines[1]) == len(DATA) + 1
    for name, expected in EXPECTED.items():
        assert (agent / f"out_{name}.bin").read_bytes() == expected, name
    refused = json.loads(lines[2])
    for name, outcome in refused.items():
        assert outcome.startswith("InvalidArgument: ") and "'data'" in outcome, (name, outcome)
        assert not (agent / f"bad_{name}.bin").exists(), name
    assert len(refused) == 10


def test_python_bytes_round_trip(tmp_path):
    body = """
    data = hugind.fs.read_bytes("data.bin")
    hugind.fs.write_bytes("copy.bin", data)
    hugind.fs.write_bytes("array.bin", bytearray(b"\\x00\\xff"))
    return [len(data), type(data).__name__]
    """
    root = tmp_path / "agent"
    root.mkdir()
    (root / "data.bin").write_bytes(DATA)
    result = probe(root, body, FS).value
    assert result == {"ok": True, "value": [len(DATA), "bytes"]}, result
    assert (root / "copy.bin").read_bytes() == DATA
    assert (root / "array.bin").read_bytes() == b"\x00\xff"
