"""hugind/policy/model.py: the host-rule classes it names lazily, and nothing else.

Written against the survivors of a mutation run (bench/mutation.py policy.model).
"""

from __future__ import annotations

import pytest

from hugind.policy import host_rules, model


@pytest.mark.parametrize("name", ["DomainRule", "IpRule", "IPNetwork"])
def test_the_host_rule_names_are_host_rules_own(name):
    assert getattr(model, name) is getattr(host_rules, name)


def test_any_other_name_is_an_attribute_error_naming_it():
    with pytest.raises(AttributeError) as caught:
        model.NoSuchThing  # noqa: B018 - the lookup is the test
    assert str(caught.value) == "module 'hugind.policy.model' has no attribute 'NoSuchThing'"
