"""Every function hugind installs on a global or a built-in looks like a built-in.

web_globals/shape.mjs lists, under node and under hugind, every property of
globalThis, of each global object and function, and of each constructor's
prototype: attributes, and for functions name, length, constructibility, an
own `prototype`, whether the source is native code. hugind installed a row
when it hangs under a global the engine does not have, or holds a function
that is not native code (the prelude's replacements on Number.prototype and
the like). Each such row that node also has must match node's exactly; a row
node lacks (hugind's own API) must still look like a built-in.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.runtime.test_web_globals import _agent, _hugind, _node, needs_node

SCRIPTS = Path(__file__).parent / "web_globals"

# The globals QuickJS-NG itself defines (ECMA-262 and the engine's own web
# functions): the rows under these are hugind's only where a function is not
# native code.
_ENGINE_NAMES = """
AggregateError Array ArrayBuffer AsyncDisposableStack Atomics BigInt BigInt64Array BigUint64Array Boolean
DataView Date DisposableStack Error EvalError FinalizationRegistry Float16Array Float32Array Float64Array
Function Infinity Int16Array Int32Array Int8Array InternalError Iterator JSON Map Math NaN Number Object
Promise Proxy RangeError ReferenceError Reflect RegExp Set SharedArrayBuffer String SuppressedError Symbol
SyntaxError TypeError URIError Uint16Array Uint32Array Uint8Array Uint8ClampedArray WeakMap WeakRef WeakSet
decodeURI decodeURIComponent encodeURI encodeURIComponent escape eval globalThis isFinite isNaN parseFloat
parseInt undefined unescape atob btoa performance queueMicrotask DOMException
"""
ENGINE_GLOBALS = frozenset(_ENGINE_NAMES.split())

# Where node's own value is not the specification's, hugind follows the spec.
NODE_DEVIATIONS = {
    # WebIDL: setTimeout(handler, optional timeout = 0, any... arguments): length 1 (node: 5).
    "globalThis.setTimeout": {"length": 1},
    "globalThis.setInterval": {"length": 1},
    # HTML: structuredClone(value, optional options = {}): length 1 (node: 0).
    "globalThis.structuredClone": {"length": 1},
    # DOM: Event's returnValue is a settable attribute (WPT Event-returnValue);
    # node 20 gives it only a getter.
    "globalThis.Event.prototype.returnValue": {"set": "set returnValue"},
    # WebIDL: an interface's attributes and operations, static ones too, are
    # enumerable; node 20 leaves these few out.
    **{
        f"globalThis.{path}": {"enumerable": True}
        for path in (
            "AbortSignal.abort",
            "AbortSignal.any",
            "AbortSignal.timeout",
            "AbortSignal.prototype.reason",
            "AbortSignal.prototype.throwIfAborted",
            "Blob.prototype.bytes",
        )
    },
    # node's MessageChannel, MessagePort and MessageEvent are its own C++
    # bindings: WebIDL makes an interface's `prototype` non-writable, names an
    # attribute's getter "get <name>", and gives close() length 0 and
    # postMessage(message, ...) length 1.
    "globalThis.MessageChannel.prototype": {"writable": False},
    "globalThis.MessagePort.prototype": {"writable": False},
    "globalThis.MessagePort.prototype.close": {"name": "close", "length": 0},
    "globalThis.MessagePort.prototype.postMessage": {"length": 1},
    **{
        f"globalThis.MessageEvent.prototype.{name}": {"name": f"get {name}"}
        for name in ("data", "lastEventId", "origin", "ports", "source")
    },
}
# The deviations that are a property's attributes; the others are its function's.
ATTRIBUTES = ("enumerable", "writable")


def _rows(stdout: bytes) -> dict[str, dict]:
    lines = stdout.decode().splitlines()
    assert lines and lines[-1] == "done", lines[-3:]
    rows = [json.loads(line) for line in lines[:-1]]
    return {row["path"]: row for row in rows}


def _functions(row: dict) -> list[dict]:
    return [v for v in (row.get("value"), row.get("get"), row.get("set")) if v and v["type"] == "function"]


def installed_by_hugind(path: str, row: dict) -> bool:
    top = path.split(".")[1]
    return top not in ENGINE_GLOBALS or any(not f["native"] for f in _functions(row))


def _function_problems(path: str, what: str, mine: dict, node: dict) -> list[str]:
    if mine["type"] != node["type"]:
        return [f"{path}: {what} is a {mine['type']}, node's a {node['type']}"]
    if mine["type"] != "function":
        return []
    expected = {**node, **{k: v for k, v in NODE_DEVIATIONS.get(path, {}).items() if k not in ATTRIBUTES}}
    problems = [
        f"{path}: {what}.{key} is {mine[key]!r}, node's {expected[key]!r}"
        for key in ("name", "length")
        if mine[key] != expected[key]
    ]
    # node writes some of its web functions as plain (constructible) functions;
    # a built-in operation is not a constructor and has no prototype.
    operation = not node["name"][:1].isupper()
    want = (False, False) if operation else (node["constructor"], node["ownPrototype"])
    if (mine["constructor"], mine["ownPrototype"]) != want:
        problems.append(
            f"{path}: {what} constructor/prototype {mine['constructor'], mine['ownPrototype']}, want {want}"
        )
    return problems


def row_problems(path: str, mine: dict, node: dict) -> list[str]:
    """A row against node's: attributes, kind, and the functions' shapes."""
    if path.count(".") == 1:
        # node makes many globals lazy accessors; WebIDL's are data properties
        # (operations, interface objects) or, for crypto and performance,
        # attributes: hugind holds them all as writable, configurable values.
        problems = (
            [] if "value" in mine and mine["writable"] and mine["configurable"] else [f"{path}: not a plain value"]
        )
        if mine["enumerable"] != node["enumerable"]:
            problems.append(f"{path}: enumerable {mine['enumerable']}, node's {node['enumerable']}")
        theirs = node["value"] if "value" in node else node["resolved"]
        return problems + _function_problems(path, "value", mine["value"], theirs)
    expected = {**node, **{k: v for k, v in NODE_DEVIATIONS.get(path, {}).items() if k in ATTRIBUTES}}
    problems = [
        f"{path}: {key} {mine.get(key)!r}, node's {expected.get(key)!r}"
        for key in ("enumerable", "configurable", "writable")
        if mine.get(key) != expected.get(key)
    ]
    if ("value" in mine) != ("value" in node):
        return [*problems, f"{path}: {'a value' if 'value' in mine else 'an accessor'}, unlike node's"]
    for what in ("value", "get", "set"):
        spec_only = NODE_DEVIATIONS.get(path, {}).get(what)
        if spec_only and node.get(what) is None and mine.get(what) is not None:
            # A function the spec has and node lacks: shaped like a built-in one.
            if (mine[what]["name"], mine[what]["constructor"], mine[what]["ownPrototype"]) != (spec_only, False, False):
                problems.append(f"{path}: {what} {mine[what]!r}, want a method named {spec_only!r}")
            continue
        if mine.get(what) is None or node.get(what) is None:
            if mine.get(what) != node.get(what):
                problems.append(f"{path}: {what} {mine.get(what)!r}, node's {node.get(what)!r}")
            continue
        problems += _function_problems(path, what, mine[what], node[what])
    return problems


def builtin_like(path: str, row: dict) -> list[str]:
    """What is wrong with a row node has no counterpart for: built-ins' rules."""
    problems = []
    for f in _functions(row):
        if f["name"] == "":
            problems.append(f"{path}: a function without a name")
        # A class has its prototype; a method, getter or plain function has neither.
        if f["constructor"] != f["ownPrototype"] or (f["constructor"] and not f["name"][:1].isupper()):
            problems.append(f"{path}: {f['name']} is constructible, or has a prototype, and is no class")
    if path.count(".") == 1 and (row["enumerable"] or not row.get("writable") or not row["configurable"]):
        problems.append(f"{path}: a global that is enumerable, read-only or not configurable")
    return problems


def compare(node: dict[str, dict], hugind: dict[str, dict]) -> tuple[list[str], int]:
    problems: list[str] = []
    checked = 0
    for path, row in hugind.items():
        if not installed_by_hugind(path, row):
            continue
        checked += 1
        problems += row_problems(path, row, node[path]) if path in node else builtin_like(path, row)
    return problems, checked


@needs_node
def test_everything_hugind_installs_is_shaped_like_a_builtin(tmp_path):
    source = (SCRIPTS / "shape.mjs").read_text()
    script = tmp_path / "node" / "shape.mjs"
    script.parent.mkdir()
    script.write_text(source)
    expected = _node(script)
    assert expected.returncode == 0, expected.stderr.decode()
    got = _hugind(_agent(tmp_path / "agent", source))
    assert got.returncode == 0, got.stderr.decode()
    node, hugind = _rows(expected.stdout), _rows(got.stdout)
    problems, checked = compare(node, hugind)
    # The walk saw the web globals, their prototypes and the locale methods.
    for path in (
        "globalThis.URL.prototype.href",
        "globalThis.TextEncoder.prototype.encodeInto",
        "globalThis.Headers.prototype.append",
        "globalThis.Number.prototype.toLocaleString",
        "globalThis.String.prototype.localeCompare",
        "globalThis.Intl.NumberFormat.prototype.format",
    ):
        assert path in hugind and installed_by_hugind(path, hugind[path]), path
    assert checked > 300
    assert problems == [], "\n".join(problems)
