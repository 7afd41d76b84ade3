"""The change feed on NATS JetStream (nats-py): one stream, a subject per sport and table.

Each change is one message on ``<prefix>.<sport>.<table>`` with the header
``Nats-Msg-Id: <origin>:<seq>``, so the stream's duplicate window drops a second
publish of it; a batch is published with a reply subject of its own, to which the stream
acks each message, and returns once each is stored.
Messages of one connection are stored in the order sent, so where the feed stands is
the last message of the stream (its id names the database and the seq). The stream is
created if missing (file storage, the subjects ``<prefix>.>``); one that exists must
take those subjects.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any

from asyncsports._optional import need
from asyncsports._wire.bus import ACK_TIMEOUT, Message, Target, Trouble, msg_id, seq_of_msg_id
from asyncsports.errors import BusError

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
        self.acks = Acks()
        self.inbox = ""  # where the stream's acks come: <inbox>.<batch>

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
            bus.inbox = nc.new_inbox()
            # One subscription takes every ack, counted in a callback: a third of the CPU
            # of nats-py's publish_async (a future, a semaphore and a token a message).
            await nc.subscribe(f"{bus.inbox}.*", cb=bus.acks.take,
                               pending_msgs_limit=-1, pending_bytes_limit=-1)  # fmt: skip
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
        """Each message published with a reply subject for its ack (the stream answers
        each); returns once every ack of the batch is in."""
        if self.lost.is_set():
            raise ConnectionError("the connection to the NATS server is closed")
        reply = self.acks.expect(len(batch), self.inbox)
        subject, send = self.target.subject, self.nc.publish
        for m in batch:
            await send(subject(m.sport, m.table), m.body, reply=reply,
                       headers={ID: msg_id(origin, m.seq)})  # fmt: skip
        done = asyncio.ensure_future(self.acks.done.wait())
        lost = asyncio.ensure_future(self.lost.wait())
        try:
            await asyncio.wait([done, lost], timeout=ACK_TIMEOUT,
                               return_when=asyncio.FIRST_COMPLETED)  # fmt: skip
        finally:
            done.cancel()
            lost.cancel()
        span = f"changes {batch[0].seq} to {batch[-1].seq}"
        if self.acks.error is not None:
            code, text = self.acks.error
            if code == 503:  # JetStream not there (yet): no responders, a restart
                raise ConnectionError(f"{self.target.shown}: {text}, publishing {span}")
            raise BusError(f"{self.target.shown}: {span} refused: {text}")
        if not self.acks.done.is_set():
            why = "lost" if self.lost.is_set() else f"no ack within {ACK_TIMEOUT:g} s"
            raise TimeoutError(f"{self.target.shown}: {why} publishing {span}")
        return self.acks.duplicates

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


class Acks:
    """The acks of the batch under way, counted as they come (to one reply subject per
    batch, so a late ack of a batch given up on is not counted for the next)."""

    def __init__(self) -> None:
        self.done = asyncio.Event()
        self.duplicates = 0
        self.error: tuple[int, str] | None = None
        self._want = self._got = self._batch = 0
        self._reply = ""

    def expect(self, n: int, inbox: str) -> str:
        """A new batch of ``n`` messages: the reply subject its acks come to."""
        self._batch += 1
        self._want, self._got, self.duplicates, self.error = n, 0, 0, None
        self.done.clear()
        self._reply = f"{inbox}.{self._batch}"
        return self._reply

    async def take(self, msg: Any) -> None:
        """One ack: ``{"stream":...,"seq":...}`` (``"duplicate":true`` when dropped as
        one), an API error, or a status without a body (503: no responders)."""
        if msg.subject != self._reply:
            return  # a batch given up on
        data: bytes = msg.data
        if not data:
            status = (msg.headers or {}).get("Status", "")
            self.error = self.error or (int(status) if status.isdigit() else 0,
                                        f"no responders (status {status or 'none'})")  # fmt: skip
            self.done.set()
            return
        if b'"error"' in data:
            try:
                err = json.loads(data)["error"]
                self.error = self.error or (int(err.get("code", 0)), str(err.get("description")))
            except (ValueError, KeyError, TypeError, AttributeError):
                self.error = self.error or (0, data.decode(errors="replace"))
            self.done.set()
            return
        if b'"duplicate":true' in data:
            self.duplicates += 1
        self._got += 1
        if self._got >= self._want:
            self.done.set()


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
