"""The change feed as webhooks (aiohttp): each change POSTed to one HTTP endpoint.

Each change is one request, its body the bus message (the line ``asyncsports changes``
prints), signed per Standard Webhooks (:mod:`asyncsports._wire.webhooks`) with the
secret of :data:`~asyncsports._wire.webhooks.SECRET_ENV`, its ``webhook-id``
``<origin>:<seq>``. An endpoint cannot say which changes it holds, so where the feed
stands is kept in the mirror database: the cursor named for the endpoint
(:func:`~asyncsports._wire.webhooks.cursor_name`), moved on after each 2xx. So a sender
killed at any point sends again only what was in flight (at least once; the id is the
receiver's deduplication key).

An answer other than 2xx: 5xx, 408 and 429 (and a timeout, a connection refused or
lost) mean the endpoint is away for now: the :class:`~asyncsports.bus.Publisher` waits
with its backoff, at least what ``Retry-After`` asks (bounded), and sends the change
again. Any other (a 4xx, a redirect: not followed) is a refusal: a
:class:`~asyncsports.errors.BusError` naming the change, the status and the start of
the answer; the feed is held there.

With ``?concurrency=N`` (N > 1), up to N requests are in flight, each table's changes
still one after the other in seq order, none more than :data:`AHEAD` times N changes past
the first not yet taken; the cursor moves up to the last change before which every
change was taken, so a restart sends again the ones taken beyond it.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

import aiohttp

from asyncsports._version import __version__
from asyncsports._wire.bus import Message, Target, Trouble, msg_id
from asyncsports._wire.retry import parse_retry_after
from asyncsports._wire.secrets import Secrets, clip
from asyncsports._wire.webhooks import SECRET_ENV, cursor_name, headers, secret_forms, secret_key
from asyncsports.errors import BusError

if TYPE_CHECKING:
    from asyncsports.store import ChangeLog

__all__ = ["Unavailable", "WebhookBus", "classify"]

SNIPPET = 120
"""Characters of an answer's body an error quotes (clipped, secrets hidden)."""

AHEAD = 8
"""With ``?concurrency=N``: how many times N changes a lane may run past the first change
not yet taken (so a restart sends again at most that many)."""

_READ = 1024  # bytes of an answer's body read for that snippet


class Unavailable(ConnectionError):
    """The endpoint answered that it cannot take a change now (5xx, 408, 429):
    ``retry_after``, the seconds its ``Retry-After`` asked for (None: it said none)."""

    def __init__(self, text: str, retry_after: float | None) -> None:
        super().__init__(text)
        self.retry_after = retry_after


class WebhookBus:
    """The :class:`~asyncsports.bus._bus.Bus` of an ``https://`` (or loopback
    ``http://``) endpoint; where the feed stands is kept in ``store``."""

    def __init__(
        self,
        target: Target,
        store: ChangeLog,
        key: bytes,
        secrets: Secrets,
        session: aiohttp.ClientSession,
    ) -> None:
        self.target = target
        self.store = store
        self.cursor = cursor_name(target.shown)
        self._key = key
        self._secrets = secrets
        self._session = session
        self._closing: set[asyncio.Task[None]] = set()

    @classmethod
    async def open(
        cls, target: Target, connect_timeout: float, store: ChangeLog | None
    ) -> WebhookBus:
        """A session for ``target``; a BusError if the secret is missing or malformed
        (no use waiting: the environment does not change)."""
        if store is None:
            raise ValueError("a webhook endpoint keeps its position in the mirror database")
        secret = os.environ.get(SECRET_ENV)
        try:
            key = secret_key(secret)
        except ValueError as exc:
            raise BusError(f"{target.shown}: {exc}") from None
        session = aiohttp.ClientSession(
            timeout=aiohttp.ClientTimeout(total=target.timeout, connect=connect_timeout),
            connector=aiohttp.TCPConnector(limit=target.concurrency),
            headers={"user-agent": f"asyncsports/{__version__} (webhooks)"},
        )
        secrets = Secrets(secret_forms(secret))
        return cls(target, store, key, secrets, session)

    async def position(self, origin: str | None) -> int:
        """The endpoint's cursor in the database: the last change it took, and every
        one before (the endpoint is not asked: it cannot say)."""
        return await self.store.cursor(self.cursor)

    async def publish(self, batch: Sequence[Message], origin: str, after: int) -> int:
        """POST each change of ``batch`` (one at a time, or per table with
        ``?concurrency=``), the cursor moved on after each taken; none is known to be a
        duplicate (the endpoint cannot say): 0."""
        if self.target.concurrency == 1:
            for m in batch:
                await self._post(m, origin)
                await self.store.save_cursor(self.cursor, m.seq)
            return 0
        await self._lanes(batch, origin)
        return 0

    async def _lanes(self, batch: Sequence[Message], origin: str) -> None:
        """``batch`` a lane per table, up to ``concurrency`` requests at once, none more
        than :data:`AHEAD` times that many changes past the first not yet taken (what a
        restart sends again); the cursor moved up to the last change with every one
        before it taken. The first failure ends every lane (what was in flight is sent
        again), then is raised: a refusal before an outage."""
        lanes: dict[str, list[tuple[int, Message]]] = {}
        for i, m in enumerate(batch):
            lanes.setdefault(m.table, []).append((i, m))
        taken = [False] * len(batch)
        upto = 0  # batch[:upto] taken
        window = AHEAD * self.target.concurrency
        moved = asyncio.Condition()
        slots = asyncio.Semaphore(self.target.concurrency)

        async def lane(messages: list[tuple[int, Message]]) -> None:
            nonlocal upto
            for i, m in messages:
                async with moved:
                    await moved.wait_for(lambda: i < upto + window)  # noqa: B023
                async with slots:
                    await self._post(m, origin)
                taken[i] = True
                was = upto
                while upto < len(batch) and taken[upto]:
                    upto += 1
                if upto > was:  # moves only forward, whichever lane saves first
                    async with moved:
                        moved.notify_all()
                    await self.store.save_cursor(self.cursor, batch[upto - 1].seq)

        tasks = [asyncio.ensure_future(lane(ms)) for ms in lanes.values()]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.wait(tasks)
        errors = [t.exception() for t in tasks if not t.cancelled() and t.exception()]
        for error in errors:
            if isinstance(error, BusError):
                raise error
        if errors:
            raise errors[0]  # type: ignore[misc]

    async def _post(self, m: Message, origin: str) -> None:
        """Deliver ``m``: return on a 2xx; :class:`Unavailable` when the endpoint asks
        for it later; a BusError when it refuses it."""
        mid = msg_id(origin, m.seq)
        sent = headers(self._key, mid, int(time.time()), m.body)
        url = self.target.url
        async with self._session.post(url, data=m.body, headers=sent, allow_redirects=False) as got:
            if 200 <= got.status < 300:
                return
            said = await self._snippet(got)
            reason = self._secrets.text(clip(" ".join((got.reason or "").split()), 60))
            status = f"HTTP {got.status}{f' {reason}' if reason else ''}{said}"
            what = f"change {m.seq} ({m.table}, webhook-id {mid})"
            if got.status in (408, 429) or got.status >= 500:
                wait = parse_retry_after(got.headers.get("Retry-After"), time.time())
                raise Unavailable(f"{what}: {status}", wait)
        raise BusError(
            f"{self.target.shown} refused {what}: {status}; the feed is held at that "
            "change: start again once the endpoint takes it"
        )

    async def _snippet(self, got: aiohttp.ClientResponse) -> str:
        """``: <the answer's start>``, one line, clipped, no secret of ours in it."""
        try:
            raw = await got.content.read(_READ)
        except (aiohttp.ClientError, OSError):
            return ""
        text = " ".join(raw.decode("utf-8", "replace").split())
        text = self._secrets.text(clip(text, SNIPPET))
        return f": {text}" if text else ""

    async def ping(self) -> None:
        """Nothing: an endpoint has no way to be looked at but a change (one away is
        seen at the next)."""

    async def close(self) -> None:
        """Close the session."""
        await self._session.close()

    def abort(self) -> None:
        """Close the session without waiting for it."""
        task = asyncio.ensure_future(self._session.close())
        self._closing.add(task)  # a reference: a pending task is not collected
        task.add_done_callback(self._closing.discard)


def classify(exc: BaseException) -> Trouble | None:
    """:func:`~asyncsports.bus._bus.classify` of an aiohttp error: refused for a URL it
    cannot send to or a certificate it does not trust (waiting changes neither); away
    for any other (a connection refused, lost, timed out; an answer cut off)."""
    if isinstance(exc, aiohttp.InvalidURL | aiohttp.ClientSSLError):
        return "refused"
    if isinstance(exc, aiohttp.ClientError):
        return "away"
    return "away" if isinstance(exc, OSError) else None
