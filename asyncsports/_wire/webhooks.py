"""The change feed as webhooks, the pure part: the Standard Webhooks signature; no I/O.

Each change is POSTed with three headers (https://www.standardwebhooks.com/):
``webhook-id``, the change's id on every bus (``<origin>:<seq>``, the NATS publisher's
``Nats-Msg-Id``: a receiver's deduplication key); ``webhook-timestamp``, the attempt's
Unix time in whole seconds; ``webhook-signature``, ``v1,`` and the base64 of the
HMAC-SHA256 of ``<id>.<timestamp>.<body>`` under the secret's key. The secret is
``whsec_`` and the key's base64, read from the environment (:data:`SECRET_ENV`), never
shown: an error about it names the variable, not its value.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac

__all__ = [
    "SECRET_ENV",
    "SECRET_PREFIX",
    "cursor_name",
    "headers",
    "secret_forms",
    "secret_key",
    "sign",
]

SECRET_ENV = "ASYNCSPORTS_WEBHOOK_SECRET"
"""The environment variable that holds the webhook secret."""

SECRET_PREFIX = "whsec_"
"""How a Standard Webhooks secret starts (the key's base64 follows)."""

_SHORTEST, _LONGEST = 24, 64  # the key's bytes, as the specification asks


def secret_key(secret: str | None) -> bytes:
    """The key of the secret ``secret`` (``whsec_<base64>``, 24 to 64 bytes). ValueError
    saying what is wrong, never quoting any of it."""
    if not secret:
        raise ValueError(
            f"set {SECRET_ENV} to the webhook secret (whsec_ and the base64 of 24 to 64 "
            "random bytes) to sign the changes sent"
        )
    if not secret.startswith(SECRET_PREFIX):
        raise ValueError(
            f"{SECRET_ENV} must start with {SECRET_PREFIX} (a Standard Webhooks secret)"
        )
    try:
        key = base64.b64decode(secret[len(SECRET_PREFIX) :], validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"{SECRET_ENV}: what follows {SECRET_PREFIX} is not base64") from None
    if not _SHORTEST <= len(key) <= _LONGEST:
        raise ValueError(
            f"{SECRET_ENV}: the key is {len(key)} bytes; the specification asks for "
            f"{_SHORTEST} to {_LONGEST}"
        )
    return key


def secret_forms(secret: str | None) -> list[str]:
    """What of the secret ``secret`` no output may show: the whole, and its key's base64
    (what follows ``whsec_``, which a receiver's echo may quote alone)."""
    if not secret:
        return []
    return [secret, secret.removeprefix(SECRET_PREFIX)]


def sign(key: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    """The ``webhook-signature`` of ``body`` sent as ``msg_id`` at ``timestamp``."""
    signed = f"{msg_id}.{timestamp}.".encode() + body
    digest = hmac.new(key, signed, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(key: bytes, msg_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    """The headers of one attempt to deliver ``body`` (a change's message)."""
    return {
        "content-type": "application/json",
        "webhook-id": msg_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(key, msg_id, timestamp, body),
    }


def cursor_name(shown: str) -> str:
    """The name of the cursor (in the mirror database) that says up to which change the
    endpoint ``shown`` (a URL without userinfo or query) has taken the feed."""
    return f"webhook {shown}"
