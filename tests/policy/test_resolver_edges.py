"""hugind/policy/resolver.py: the system resolver on loopback and numeric hosts only (no DNS query).

Written for the mutation run (bench/mutation.py policy.resolver): every other test replaces the
resolver, so nothing called the real one in-process.
"""

from __future__ import annotations

import socket

import pytest

from hugind.policy.resolver import system_resolver


@pytest.mark.parametrize(
    ("host", "port", "expected"),
    [
        ("127.0.0.1", 80, ["127.0.0.1"]),
        ("::1", 443, ["::1"]),
        # A zone index is not part of the address the network rules check.
        ("fe80::1%lo", 80, ["fe80::1"]),
    ],
)
def test_numeric_hosts_come_back_once_each_without_a_zone(host, port, expected):
    assert system_resolver(host, port, 5.0) == expected


def test_a_lookup_error_is_getaddrinfos_own():
    with pytest.raises(socket.gaierror) as caught:
        system_resolver("127.0.0.1", -1, 5.0)
    assert caught.value.errno == socket.EAI_SERVICE
