"""The service's hosts that moved: a decommissioned host, and where its service went.

The vendor's page for the live websockets ("Media - Live statistics",
docs.sportradar.com/basketball/live-websockets/media-live-statistics) lists
``wss://dde-streams.data.imgarena.com`` as legacy, decommissioned on 30 September 2026,
and ``wss://dde-streams.data.srarena.io`` as the new host (docs/wire.md, "The service's
hosts"). A client configured with the old host is not refused (a proxy or a test may still
answer there); a connection to it that fails says where the service is now.
"""

from __future__ import annotations

from urllib.parse import urlsplit

__all__ = ["MOVED", "moved"]

MOVED: dict[str, tuple[str, str]] = {
    "dde-streams.data.imgarena.com": ("wss://dde-streams.data.srarena.io", "30 September 2026"),
}
"""Decommissioned host -> (today's address, the date the old one went)."""


def moved(url: str) -> str | None:
    """What to tell a caller whose connection to ``url`` failed, if its host moved."""
    try:
        host = (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:  # not a URL at all: nothing to say about its host
        return None
    if host not in MOVED:
        return None
    new, when = MOVED[host]
    return (
        f"{host} was decommissioned on {when}: the live feeds are at {new} now"
        f" (Client(live_url='{new}'), --live-url {new})"
    )
