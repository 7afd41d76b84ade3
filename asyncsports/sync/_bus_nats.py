"""The change feed on NATS JetStream (nats-py): one stream, a subject per sport and table.

Each change is one message on ``<prefix>.<sport>.<table>`` with the header
``Nats-Msg-Id: <origin>:<seq>``, so the stream's duplicate window drops a second
publish of it; a batch is published with async acks and returns once each is stored.
Messages of one connection are stored in the order sent, so where the feed stands is
the last message of the stream (its id names the database and the seq). The stream is
created if missing (file storage, the subjects ``<prefix>.>``); one that exists must
take those subjects.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from asyncsports._optional import need
from asyncsports._wire.bus import ACK_TIMEOUT, Message, Target, msg_id, seq_of_msg_id
from asyncsports.errors import BusError

from ._bus import Trouble

__all__ = ["NatsBus", "classify"]

FEATURE = "publishing the change feed to NATS JetStream (--to nats://...)"
ID = "Nats-Msg-Id"


class NatsBus:
    """The :class:`~asyncsports.sync._bus.Bus` of a ``nats://`` target."""

    def __init__(self, target: Target, nc: Any) -> None:
        self.target = target
        self.nc = nc
        self.js = nc.jetstream(timeout=ACK_TIMEOUT)
        self.lost = asyncio.Event()  # the connection ended: pending acks will not come

    @classmethod
    async def open(cls, target: Target, connect_timeout: float) -> NatsBus:
        """Connected, and the stream there (created if missing)."""
        nats = need("nats", FEATURE)
        bus: NatsBus | None = None
        seen: list[Exception] = []

        async def ended() -> None:
            if bus is not None:
                bus.lost.set()

        async def error(exc: Exception) -> None:
            seen.append(exc)  # said by the call it fails (nats-py would log each itself)

        try:
            nc = await nats.connect(
                servers=[target.url],
                connect_timeout=connect_timeout,
                # The publisher's own loop reconnects, and reads where the bus stands.
                allow_reconnect=False,
                # One more try, then NoServersError (0 would mean: for ever).
                max_reconnect_attempts=1,
                reconnect_time_wait=0.1,
                disconnected_cb=ended,
                closed_cb=ended,
                error_cb=error,
            )
        except need("nats.errors", FEATURE).NoServersError:
            why = " ".join(str(seen[-1]).split()) if seen else "no server answered"
            raise ConnectionError(why) from (seen[-1] if seen else None)
        bus = cls(target, nc)
        try:
            await bus._ensure_stream()
        except BaseException:
            await bus.close()
            raise
        return bus

    async def _ensure_stream(self) -> None:
        errors = need("nats.js.errors", FEATURE)
        api = need("nats.js.api", FEATURE)
        subjects = f"{self.target.prefix}.>"
        try:
            info = await self.js.stream_info(self.target.stream)
        except errors.NotFoundError:
            config = api.StreamConfig(
                name=self.target.stream,
                subjects=[subjects],
                storage=api.StorageType.FILE,
                duplicate_window=self.target.duplicate_window,
            )
            await self.js.add_stream(config)
            return
        have = list(info.config.subjects or ())
        if subjects not in have and ">" not in have:
            raise BusError(
                f"{self.target.shown}: the stream exists with subjects {have}, not {subjects}"
            )

    async def position(self) -> tuple[int, str | None]:
        """The stream's last message: its id's seq and origin."""
        errors = need("nats.js.errors", FEATURE)
        info = await self.js.stream_info(self.target.stream)
        last = info.state.last_seq or 0
        if not last or not info.state.messages:
            return 0, None  # empty, or purged: nothing there says where the feed stood
        try:
            msg = await self.js.get_msg(self.target.stream, seq=last)
        except errors.NotFoundError:  # deleted meanwhile: the stream is purged or trimmed
            return 0, None
        value = (msg.headers or {}).get(ID)
        try:
            origin, seq = seq_of_msg_id(value or "")
        except ValueError:
            raise BusError(
                f"{self.target.shown}: its last message ({msg.subject}, stream seq {last}) "
                f"was not published by asyncsports ({ID}: {value!r})"
            ) from None
        return seq, origin

    async def publish(self, batch: Sequence[Message], origin: str) -> int:
        """Each message published with an async ack; returns once every ack is in."""
        if self.lost.is_set():
            raise ConnectionError("the connection to the NATS server is closed")
        subject, send = self.target.subject, self.js.publish_async
        acks = [
            await send(subject(m.sport, m.table), m.body, headers={ID: msg_id(origin, m.seq)})
            for m in batch
        ]
        every: asyncio.Future[list[Any]] = asyncio.gather(*acks)
        lost: asyncio.Future[Any] = asyncio.ensure_future(self.lost.wait())
        try:
            done, _ = await asyncio.wait([every, lost], timeout=ACK_TIMEOUT,
                                         return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        finally:
            lost.cancel()
        if every not in done:
            every.cancel()
            why = "lost" if self.lost.is_set() else f"no ack within {ACK_TIMEOUT:g} s"
            raise TimeoutError(f"{self.target.shown}: {why} publishing changes "
                               f"{batch[0].seq} to {batch[-1].seq}")  # fmt: skip
        return sum(1 for ack in every.result() if ack.duplicate)

    async def ping(self) -> None:
        """A PING answered (nats-py's flush), on a connection not seen lost."""
        if self.lost.is_set():
            raise ConnectionError("the connection to the NATS server is closed")
        await self.nc.flush(timeout=ACK_TIMEOUT)

    async def close(self) -> None:
        """Close the connection (what is pending is dropped: its acks are not awaited)."""
        if not self.nc.is_closed:
            try:
                await asyncio.wait_for(self.nc.close(), 5.0)
            except Exception:
                self.abort()

    def abort(self) -> None:
        """Drop the connection now."""
        transport = getattr(self.nc, "_transport", None)
        if transport is not None:
            with_abort = getattr(getattr(transport, "_io_writer", None), "transport", None)
            if with_abort is not None:
                with_abort.abort()


def classify(exc: BaseException) -> Trouble | None:
    """:func:`~asyncsports.sync._bus.classify` of a nats-py error: a connection lost or
    refused, no answer, JetStream not up yet (no responders, 503) or a server error pass;
    a refusal (credentials, a bad request) does not."""
    errors = need("nats.errors", FEATURE)
    js = need("nats.js.errors", FEATURE)
    away = (errors.TimeoutError, errors.NoRespondersError, errors.StaleConnectionError,
            errors.OutboundBufferLimitError, errors.ConnectionClosedError, errors.NoServersError,
            errors.ConnectionDrainingError, errors.ConnectionReconnectingError,
            js.ServiceUnavailableError, js.ServerError)  # fmt: skip
    if isinstance(exc, away):
        return "away"
    if isinstance(exc, errors.Error):
        return "refused"
    return "away" if isinstance(exc, OSError) else None
