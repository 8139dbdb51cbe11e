"""hugind/policy/resolver.py: a lookup that outlives its timeout, and the rows a platform's
``getaddrinfo`` may give, through the resolver's ``lookup`` seam.

Written against the survivors of a mutation run (bench/mutation.py policy.resolver). The lookup
passed in stands for ``socket.getaddrinfo``: no DNS query, no socket.
"""

from __future__ import annotations

import socket
import threading

import pytest

from hugind.policy.resolver import system_resolver


def _row(address: str, port: int) -> tuple:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sockaddr = (address, port, 0, 0) if family == socket.AF_INET6 else (address, port)
    return (family, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", sockaddr)


def test_a_lookup_that_outlives_its_timeout_is_refused_and_left_behind_as_a_daemon():
    release, entered = threading.Event(), threading.Event()
    seen: list[threading.Thread] = []

    def slow(host: str, port: int, **kwargs: object) -> list[tuple]:
        seen.append(threading.current_thread())
        entered.set()
        release.wait(30)  # the test lets it go once the resolver has given up
        return [_row("127.0.0.1", port)]

    try:
        with pytest.raises(OSError) as caught:
            system_resolver("slow.invalid", 443, 0.25, lookup=slow)
        assert str(caught.value) == "lookup timed out after 0.25s"
        assert entered.wait(10)  # on a loaded machine the thread may start after the timeout
        lookup_thread = seen[0]
        # Abandoned, still waiting: as a daemon it cannot hold the process open at exit, and
        # it shows by name in a thread dump.
        assert lookup_thread is not threading.current_thread()
        assert lookup_thread.is_alive()
        assert lookup_thread.daemon is True
        assert lookup_thread.name == "hugind-resolve"
    finally:
        release.set()
    seen[0].join(5)
    assert not seen[0].is_alive()


def test_a_lookup_within_its_timeout_is_answered():
    def quick(host: str, port: int, **kwargs: object) -> list[tuple]:
        assert (host, port) == ("svc.invalid", 8443)
        return [_row("192.0.2.7", port), _row("2001:db8::7", port), _row("192.0.2.7", port)]

    assert system_resolver("svc.invalid", 8443, 5.0, lookup=quick) == ["192.0.2.7", "2001:db8::7"]


def test_a_zone_written_into_the_address_string_is_dropped():
    # Some platforms' getaddrinfo give a link-local address as "fe80::1%lo0"; the network rules
    # check the address alone, however the platform spells the zone.
    def scoped(host: str, port: int, **kwargs: object) -> list[tuple]:
        return [_row("fe80::1%lo0", port), _row("fe80::1%en0", port), _row("fe80::2", port)]

    assert system_resolver("link.invalid", 80, 5.0, lookup=scoped) == ["fe80::1", "fe80::2"]


def test_the_lookups_own_error_comes_back_unchanged():
    error = socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    def failing(host: str, port: int, **kwargs: object) -> list[tuple]:
        raise error

    with pytest.raises(socket.gaierror) as caught:
        system_resolver("nowhere.invalid", 80, 5.0, lookup=failing)
    assert caught.value is error
