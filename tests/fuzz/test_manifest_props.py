"""Properties of manifest and preset loading (agent.yaml, --policy files).

Whatever the file holds, loading it either succeeds or raises a UsageError
(ManifestError, exit 2) naming the problem: never another exception, which
the CLI would report as a bug (exit 70). A key given twice is always refused.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import example, given
from hypothesis import strategies as st

from hugind.errors import ManifestError, UsageError
from hugind.manifest import KNOWN_KEYS, load_agent
from hugind.mcp import McpHub
from hugind.policy import build_policy, load_preset
from hugind.policy.parse import PRESET_KEYS, SECTIONS
from hugind.run import RunOptions, make_policy
from hugind.yamlfile import load_yaml_file

# Words the loaders know, so generated documents get past "unknown key" often.
SECTION_KEYS = sorted({key for keys in SECTIONS.values() for key in keys})
WORDS = sorted({*KNOWN_KEYS, *SECTIONS, *SECTION_KEYS, *PRESET_KEYS, "env", "required", "command", "args", "url"})
TRICKY_STRINGS = [
    "",
    ".",
    "..",
    "/",
    "../..",
    "/etc/passwd",
    "~",
    "*",
    "*.example.com",
    "0.0.0.0/0",
    "::1",
    "127.0.0.1",
    "localhost",
    "main.js",
    "agent.wasm",
    "none",
    "scratch",
    "read-only",
    "read-write",
    "script",
    "agentic",
    "http://127.0.0.1:1/v1",
    "$(id)",
    "a\x00b",
    "\ufeff",
    "x" * 300,
]

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(TRICKY_STRINGS),
    st.text(max_size=20),
)
keys = st.one_of(st.sampled_from(WORDS), st.text(max_size=12), st.integers(-3, 3), st.booleans())
nested = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(keys, inner, max_size=5)),
    max_leaves=25,
)
manifest_like = st.fixed_dictionaries(
    {},
    optional={
        "name": st.one_of(st.just("fuzz"), scalars),
        "entry_point": st.one_of(st.just("main.js"), scalars),
        "mode": st.one_of(st.sampled_from(["script", "agentic"]), scalars),
        "runtime_fs_mode": st.one_of(st.sampled_from(["none", "read-only", "read-write", "scratch"]), scalars),
        "permissions": st.one_of(
            st.dictionaries(st.sampled_from(sorted(SECTIONS)), st.dictionaries(st.sampled_from(SECTION_KEYS), nested)),
            nested,
        ),
        "env": nested,
        "mcp": nested,
        "backend": nested,
        "max_turns": nested,
        "tool_format": nested,
        "input_schema": nested,
        "version": nested,
    },
)

# YAML-ish text: lines of indentation, a key, a separator and a value, from
# the characters YAML gives meaning to.
yaml_line = st.tuples(
    st.sampled_from(["", "  ", "    ", "- ", "  - ", "\t"]),
    st.one_of(st.sampled_from(WORDS), st.text(max_size=8)),
    st.sampled_from([": ", ":", " : ", "", ": |\n  ", ": >\n  ", ": &a ", ": *a ", ": !!str ", ": !!python/object "]),
    st.one_of(
        st.sampled_from(["[", "]", "{", "}", "[a, b]", "{a: 1}", "<<: *a", "'", '"', "? x", "%YAML 1.1", "---", "..."]),
        st.text(max_size=10),
        st.sampled_from(TRICKY_STRINGS),
    ),
)
yaml_ish = st.lists(yaml_line, max_size=12).map(lambda lines: "\n".join(i + k + s + v for i, k, s, v in lines))
any_text = st.one_of(yaml_ish, st.text(max_size=200), nested.map(yaml.safe_dump), manifest_like.map(yaml.safe_dump))


def _load_everything(raw: bytes) -> None:
    """What ``hugind check`` and ``hugind run --policy`` do with the file; only UsageErrors may escape."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "agent"
        root.mkdir()
        (root / "main.js").write_text("export default () => 1;\n")
        (root / "agent.yaml").write_bytes(raw)
        (root / "preset.yaml").write_bytes(raw)
        for strict in (False, True):
            try:
                agent = load_agent(root)
                engine = make_policy(agent, RunOptions(strict=strict))
                engine.describe()
                engine.to_json()
                engine.close()
                McpHub.for_agent(agent, strict=strict, host_env={})
            except UsageError:
                pass
        try:
            preset = load_preset(root / "preset.yaml")
            build_policy({}, runtime_fs_mode=None, agent_root=root, preset=preset)
        except UsageError:
            pass


@given(any_text)
def test_any_text_loads_or_is_a_usage_error(text: str) -> None:
    _load_everything(text.encode("utf-8", "surrogatepass"))


@given(st.binary(max_size=300))
def test_any_bytes_load_or_are_a_usage_error(raw: bytes) -> None:
    _load_everything(raw)


@given(manifest_like, st.one_of(st.none(), manifest_like))
# Found by the long profile: env keys of mixed types; entry points the filesystem cannot take.
@example({"env": {"allow": {"allow": None, 0: None}}}, None)
@example({"entry_point": "x" * 300}, None)
@example({"entry_point": "a\x00b"}, None)
def test_any_manifest_data_with_any_preset_is_a_policy_or_a_usage_error(data: dict[str, Any], preset: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "main.js").write_text("export default () => 1;\n")
        (root / "agent.yaml").write_text(yaml.safe_dump({"name": "fuzz", "entry_point": "main.js", **data}))
        if preset is not None:
            (root / "preset.yaml").write_text(yaml.safe_dump(preset))
        try:
            agent = load_agent(root)
            options = RunOptions(policy_file=root / "preset.yaml" if preset is not None else None)
            make_policy(agent, options).close()
        except UsageError:
            pass


# ---- duplicate keys --------------------------------------------------------------------

plain_keys = st.one_of(st.sampled_from(WORDS), st.text(min_size=1, max_size=10), st.integers(-5, 5))
documents = st.dictionaries(plain_keys, nested, min_size=1, max_size=6)


@given(documents, st.data(), st.integers(min_value=0, max_value=3))
def test_a_repeated_key_is_refused_with_its_name_and_line(doc: dict[Any, Any], data: st.DataObject, depth: int) -> None:
    key = data.draw(st.sampled_from(sorted(doc, key=repr)))
    again = data.draw(nested)
    body = yaml.safe_dump(doc, default_flow_style=False) + yaml.safe_dump({key: again}, default_flow_style=False)
    # The same document nested under `depth` parent keys: duplicates are refused at any level.
    text = "".join("  " * i + f"p{i}:\n" for i in range(depth))
    text += "".join("  " * depth + line + "\n" for line in body.splitlines())
    line = depth + len(yaml.safe_dump(doc, default_flow_style=False).splitlines()) + 1
    try:
        load_yaml_file(text, "agent.yaml")
    except ManifestError as err:
        assert err.message.startswith(f"agent.yaml:{line}: duplicate key {key!r}"), (err.message, text)
    else:
        raise AssertionError(f"duplicate key {key!r} accepted:\n{text}")


@given(documents)
def test_documents_without_repeats_load_as_safe_load_does(doc: dict[Any, Any]) -> None:
    text = yaml.safe_dump(doc)
    assert repr(load_yaml_file(text, "agent.yaml")) == repr(yaml.safe_load(text))  # repr: NaN != NaN
