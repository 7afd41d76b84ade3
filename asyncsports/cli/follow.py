"""Following a fixture as it is played: over the live websocket, or by polling the REST API.

``--via ws`` reads ``client.live`` (each record once, pushed as it happens); ``--via poll``
asks the REST API every ``--interval`` seconds. Both print the same changes: ``new`` for an
action (or the first statistics packet) not seen before, ``update`` for a later version.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Literal

from asyncsports._iter.watch import Change, jittered
from asyncsports.client import Client
from asyncsports.errors import NotFoundError, RateLimitError, ServerError, TransportError
from asyncsports.live import Feed
from asyncsports.models import Action, Statistics

from .exits import ConfigError, FeedEndedError
from .options import Globals, Speed, Way

__all__ = [
    "How",
    "actions",
    "actions_ws",
    "choose",
    "statistics",
    "statistics_poll",
    "statistics_ws",
]

log = logging.getLogger("asyncsports")

Via = Literal["poll", "ws"]


def choose(cfg: Globals, via: Way | None) -> Via:
    """The way to follow: ``--via``, else the websocket when there is a live URL."""
    live = bool(cfg.live_url or cfg.emulator)
    if via is None:
        return "ws" if live else "poll"
    if via is Way.ws and not live:
        raise ConfigError(
            "--via ws needs the live feeds' address: pass --live-url URL "
            "(or set ASYNCSPORTS_LIVE_URL), or use --emulator"
        )
    return "ws" if via is Way.ws else "poll"


@dataclass(frozen=True, slots=True)
class How:
    """What the command line says about following: ``--via``, ``--interval``, ``--replay``."""

    via: Way | None = None
    interval: float = 5.0
    replay: Speed = Speed.fast


def actions(
    cfg: Globals, how: How, client: Client, sport: str, fixture_id: str
) -> AsyncIterator[Change[Action]]:
    """A fixture's actions as changes, the way ``--via`` chooses (run inside the job, so
    that a missing live URL is reported like any configuration error)."""
    if choose(cfg, how.via) == "ws":
        return actions_ws(client, sport, fixture_id, how.replay.value)
    return client.actions.follow(sport, fixture_id, interval=how.interval)


def statistics(
    cfg: Globals, how: How, client: Client, sport: str, fixture_id: str
) -> AsyncIterator[Change[Statistics]]:
    """A fixture's statistics packets as changes, the way ``--via`` chooses."""
    if choose(cfg, how.via) == "ws":
        return statistics_ws(client, sport, fixture_id, how.replay.value)
    return statistics_poll(client, sport, fixture_id, how.interval)


async def actions_ws(
    client: Client, sport: str, fixture_id: str, replay: str = "fast"
) -> AsyncIterator[Change[Action]]:
    """A fixture's actions over the websocket, as changes (a later version is an update)."""
    seen: set[uuid.UUID] = set()
    async with client.live.actions(sport, fixture_id, replay=replay) as feed:
        async for action in feed:
            key = action.fixture_action.action_id
            yield Change("update" if key in seen else "new", action)
            seen.add(key)
    _check_end(feed)


async def statistics_ws(
    client: Client, sport: str, fixture_id: str, replay: str = "fast"
) -> AsyncIterator[Change[Statistics]]:
    """A fixture's statistics packets over the websocket: the first new, then updates."""
    kind: Literal["new", "update"] = "new"
    async with client.live.statistics(sport, fixture_id, replay=replay) as feed:
        async for packet in feed:
            yield Change(kind, packet)
            kind = "update"
    _check_end(feed)


def _check_end(feed: Feed[Any]) -> None:
    """A feed that ended without the finishing record (the service said the fixture is
    over, e.g. postponed) is not the fixture's end: say so, with an exit code of its own."""
    if not feed.finished:
        raise FeedEndedError(
            f"the live {feed.kind} feed of {feed.fixture_id} ended after {feed.position} "
            f"records without the fixture's finishing record: {feed.ended or 'no reason given'}"
        )


async def statistics_poll(
    client: Client, sport: str, fixture_id: str, interval: float
) -> AsyncIterator[Change[Statistics]]:
    """Poll a fixture's statistics until its finished packet (the REST API has only that).

    The fixture is looked up first, so that an unknown one is a 404 at once; after that a
    404 means no packet yet. Passing failures are logged and polled past.
    """
    await client.fixtures.get(sport, fixture_id)
    last: Statistics | None = None
    while True:
        try:
            packet = await client.statistics.get(sport, fixture_id)
        except NotFoundError:
            log.info("no statistics yet for %s: polling again in %gs", fixture_id, interval)
        except (TransportError, ServerError, RateLimitError) as exc:
            log.warning("poll of statistics failed, polling on: %s", exc)
        else:
            if packet != last:
                yield Change("new" if last is None else "update", packet)
                last = packet
            if packet.finished:
                return
        await asyncio.sleep(jittered(interval, 0.1))
