"""Every YAML file hugind reads (agent.yaml, presets, workflows, config, skill
front matter) is parsed here.

``yaml.safe_load`` with three things added:

* a duplicate key is an error naming the key and its line, not a silent
  "last one wins": ``allow: false`` followed, further down, by ``allow: true``
  must never pass review as the first;
* input nested beyond what the parser's recursion can take is an error, not a
  ``RecursionError``;
* aliases may not make the document bigger than ``MAX_EXPANDED_NODES`` nodes
  once expanded, nor refer to a node that contains them: a few hundred bytes
  of nested ``&a [*b, *b, ...]`` otherwise become a structure of billions of
  nodes the moment anything walks it (a schema sent as JSON, a dump).

libyaml's ``CSafeLoader`` parses an agent.yaml about ten times faster than the
pure-Python loader, but it overflows the C stack, and crashes the process, on
deeply nested input, and its error messages differ. So it only takes text it
is certain to treat as the pure loader does: ASCII without tabs, nested at most
``_C_NESTING`` deep (see ``_c_can_take``), and anything it refuses is parsed
again by the pure loader, whose error is the one reported. Both loaders share
the duplicate-key and alias checks, which run on the composed nodes.

All three errors are ``yaml.YAMLError`` subclasses, so callers handle them with the
syntax errors they already handle.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import CollectionNode, MappingNode, Node

from hugind.errors import ManifestError

_MERGE_TAG = "tag:yaml.org,2002:merge"
# Far above any real agent.yaml, preset or workflow (hundreds to a few thousand nodes).
MAX_EXPANDED_NODES = 200_000


class DuplicateKeyError(ConstructorError):
    """A mapping names the same key twice."""


class NestingError(yaml.YAMLError):
    """The document is nested too deeply to parse."""

    problem = "the document is nested too deeply"
    problem_mark = None

    def __str__(self) -> str:
        return self.problem


class AliasExpansionError(yaml.YAMLError):
    """Aliases expand the document past the cap, or form a cycle."""

    problem_mark = None

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem

    def __str__(self) -> str:
        return self.problem


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, CollectionNode):
        return list(node.value)
    return []


def check_expansion(root: Node, cap: int = MAX_EXPANDED_NODES) -> None:
    """Refuse a node graph whose tree, aliases expanded, exceeds ``cap`` nodes or is cyclic.

    An alias is the very node object it names, so a memo per node makes this
    linear in the file, whatever the expansion would be."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(child)] for child in _children(node))
            if sizes[key] > cap:
                raise AliasExpansionError(f"aliases expand the document past {cap} nodes")
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise AliasExpansionError("an alias refers to a node that contains it")
        on_path.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in on_path:
                raise AliasExpansionError("an alias refers to a node that contains it")
            if id(child) not in sizes:
                stack.append((child, False))


class _RefuseDuplicates:
    """Constructor mixin: a mapping naming a key twice is an error (merge keys ``<<`` may
    still be overridden), and so is an alias bomb."""

    def construct_document(self, node: Node) -> Any:
        check_expansion(node)
        return super().construct_document(node)  # type: ignore[misc]

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, MappingNode):
            seen: dict[Any, int] = {}  # key -> 0-based line of its first occurrence
            for key_node, _ in node.value:
                if key_node.tag == _MERGE_TAG:
                    continue
                key = self.construct_object(key_node, deep=deep)
                try:
                    first = seen.get(key)
                except TypeError:
                    continue  # an unhashable key: the base class reports it
                if first is not None:
                    raise DuplicateKeyError(
                        None, None, f"duplicate key {key!r} (first at line {first + 1})", key_node.start_mark
                    )
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)  # type: ignore[misc]


class StrictSafeLoader(_RefuseDuplicates, yaml.SafeLoader):
    """SafeLoader that refuses duplicate keys."""


_CLoader = getattr(yaml, "CSafeLoader", None)  # None: PyYAML built without libyaml
_StrictCSafeLoader = type("_StrictCSafeLoader", (_RefuseDuplicates, _CLoader), {}) if _CLoader else None

# Every collection opens with one of these characters ("[", "{", a "-" entry, a
# "key:" or a "? key"), one character opening at most one, so their count bounds
# the nesting. 200 is far inside both libyaml's C stack and the pure composer's
# recursion (two Python frames a level under a limit of 1000).
_OPENERS = "[{-:?"
_C_NESTING = 200


def _c_can_take(text: str) -> bool:
    if _StrictCSafeLoader is None or not isinstance(text, str) or not text.isascii() or "\t" in text:
        return False  # non-ASCII line breaks and tabs are where the two parsers' readers differ
    return sum(text.count(c) for c in _OPENERS) <= _C_NESTING


def load_yaml(text: str) -> Any:
    """Parse one YAML document like ``yaml.safe_load``; raises ``yaml.YAMLError`` only."""
    if _c_can_take(text):
        try:
            return yaml.load(text, Loader=_StrictCSafeLoader)
        except (DuplicateKeyError, AliasExpansionError):
            raise  # found by the shared constructor: the same finding either way
        except yaml.YAMLError:
            pass  # the pure loader says what is wrong, in its own words, as before
    try:
        return yaml.load(text, Loader=StrictSafeLoader)
    except RecursionError:
        raise NestingError() from None


def yaml_problem(exc: yaml.YAMLError) -> tuple[int | None, str]:
    """(1-based line or None, what is wrong) for a parse error."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or (str(exc).splitlines() or ["invalid YAML"])[0]
    return (mark.line + 1 if mark is not None else None), problem


def load_yaml_file(text: str, source: str) -> Any:
    """``load_yaml`` for a file hugind reads as configuration: errors are ``ManifestError``s
    naming the file and line (``agent.yaml:7: duplicate key 'allow' (first at line 3)``)."""
    try:
        return load_yaml(text)
    except DuplicateKeyError as exc:
        line, problem = yaml_problem(exc)
        raise ManifestError(problem, f"{source}:{line}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise ManifestError(f"invalid YAML{where}: {yaml_problem(exc)[1]}", source) from None
