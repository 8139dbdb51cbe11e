"""Capabilities the guest reaches through the host ABI: each acts only after
the policy engine has said yes."""
