from tests.support.fixtures import client, make_client, server

__all__ = ["client", "make_client", "server"]
