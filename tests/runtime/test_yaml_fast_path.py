"""hugind/yamlfile.py hands the text it is sure of to libyaml: same values, same errors.

The C loader is only an accelerator: for every text it takes, the result (value,
duplicate-key error, syntax error) must be what the pure-Python loader gives.
"""

from __future__ import annotations

import pytest
import yaml

from hugind import yamlfile
from hugind.errors import ManifestError
from hugind.yamlfile import StrictSafeLoader, load_yaml, load_yaml_file
from tests.conftest import REPO

pytestmark = pytest.mark.skipif(yamlfile._StrictCSafeLoader is None, reason="PyYAML without libyaml")

REPO_YAML = sorted(
    p
    for pattern in ("examples/**/*.yaml", "hugind/templates/**/*.yaml", "policy/*.yaml", "tests/**/*.yaml")
    for p in REPO.glob(pattern)
    if "node_modules" not in p.parts
)


def _pure(text: str):
    return yaml.load(text, Loader=StrictSafeLoader)


def test_the_repository_yaml_files_exist():
    assert len(REPO_YAML) >= 10  # the comparison below must have material


@pytest.mark.parametrize("path", REPO_YAML, ids=lambda p: str(p.relative_to(REPO)))
def test_every_yaml_file_of_the_repository_loads_as_the_pure_loader_loads_it(path):
    text = path.read_text(encoding="utf-8")
    try:
        expected = repr(_pure(text))
    except yaml.YAMLError as exc:
        expected = f"error {exc}"
    try:
        got = repr(load_yaml(text))
    except yaml.YAMLError as exc:
        got = f"error {exc}"
    assert got == expected


def test_an_agent_yaml_goes_through_libyaml(monkeypatch):
    text = (REPO / "examples/hello/agent.yaml").read_text()
    assert yamlfile._c_can_take(text)
    monkeypatch.setattr(yamlfile, "StrictSafeLoader", None)  # the pure loader is not reached
    assert load_yaml(text)["name"] == "hello"


@pytest.mark.parametrize(
    "text",
    [
        "a: 1\n\tb: 2\n",  # a tab
        "name: caf\u00e9\n",  # not ASCII
        "a: x\u2028b: y\n",  # a Unicode line break
        "[" * 300 + "]" * 300,  # nested too deep to be sure of
        "k: " + "-" * 201 + "\n",  # a harmless value, but over the count
    ],
)
def test_text_it_is_not_sure_of_goes_to_the_pure_loader(text):
    assert not yamlfile._c_can_take(text)


@pytest.mark.parametrize(
    "text",
    [
        "a: [1, 2\n",
        "a: b: c\n",
        "a:\n  - 1\n  b: 2\n",
        "{a: 1",
        "'unterminated\n",
        "a: *missing\n",
        "%YAML 2.0\n---\na: 1\n",
        "a: !!python/object:os.system x\n",
    ],
)
def test_a_broken_document_gets_the_pure_loaders_error(monkeypatch, text):
    assert yamlfile._c_can_take(text)
    with pytest.raises(ManifestError) as ours:
        load_yaml_file(text, "f.yaml")
    monkeypatch.setattr(yamlfile, "_c_can_take", lambda text: False)
    with pytest.raises(ManifestError) as pure:
        load_yaml_file(text, "f.yaml")
    assert ours.value.message == pure.value.message
    assert "invalid YAML" in pure.value.message


def test_a_duplicate_key_found_by_libyaml_names_the_same_line():
    text = "name: a\npermissions:\n  shell:\n    allow: false\n    allow: true\n"
    assert yamlfile._c_can_take(text)
    with pytest.raises(ManifestError, match=r"^f\.yaml:5: duplicate key 'allow' \(first at line 4\)$"):
        load_yaml_file(text, "f.yaml")


def test_deep_nesting_is_still_an_error_not_a_crash():
    with pytest.raises(ManifestError, match="nested too deeply"):
        load_yaml_file("[" * 100_000 + "]" * 100_000, "f.yaml")
