"""The change feed on NATS JetStream (nats-py): one stream, a subject per sport and table.

Each change is one message on ``<prefix>.<sport>.<table>`` with the header
``Nats-Msg-Id: <origin>:<seq>``, so the stream's duplicate window drops a second
publish of it; a batch is published with a reply subject of its own, to which the stream
acks each message, and returns once each is stored. The stream stores a message only
right after ours (optimistic concurrency): a batch's first message expects the stream's
last sequence to be that of the change it follows, each next one the message id before
it, so another database's messages never interleave with ours (docs/wire.md).
Where the feed stands is the last message of the stream (its id names the database and
the seq), checked to be this database's. The stream is created if missing (file
storage, the subjects ``<prefix>.>``); one that exists must take those subjects.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.parse
from collections.abc import Awaitable, Sequence
from typing import Any, TypeVar

from asyncsports._optional import need
from asyncsports._wire.bus import (
    ACK_TIMEOUT,
    PROBE,
    Message,
    Target,
    Trouble,
    msg_id,
    seq_of_msg_id,
    who_answered,
)
from asyncsports.errors import BusError

__all__ = ["NatsBus", "classify"]

FEATURE = "publishing the change feed to NATS JetStream (--to nats://...)"
ID = "Nats-Msg-Id"
T = TypeVar("T")
# What nats-py (2.15 to 2.16) says of a connection that ends before the server's INFO.
_NO_INFO = "empty response from server when expecting INFO"
LOOK = 0.5
"""Seconds a connection may wait for the server's INFO (a NATS server sends it at once)
before another connection looks at who listens there."""
LAST_SEQ = "Nats-Expected-Last-Sequence"
LAST_ID = "Nats-Expected-Last-Msg-Id"

# JetStream's error codes (err_code) of a publish refused.
_MOVED = (10070, 10071)  # wrong last msg id / sequence: not after our last message
_STORE_FAILED = 10077  # the store's error: a limit of a stream with discard new, or other
_TOO_BIG = 10054  # over the stream's max_msg_size
_TRIES = 8  # reads of where the stream stands, a batch (each after another publisher's)


class NatsBus:
    """The :class:`~asyncsports.bus._bus.Bus` of a ``nats://`` target."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.nc: Any = None  # nats-py's client, once connected (open)
        self.js: Any = None
        self.lost = asyncio.Event()  # the connection ended: pending acks will not come
        self.acks = Acks()
        self.inbox = ""  # where the stream's acks come: <inbox>.<batch>
        self.tail: tuple[int, int] | None = None  # (change, stream seq) of the last, ours
        self.max_msg_size = -1  # the stream's
        self.refusal: str | None = None  # a permissions violation the server said
        self.seen: list[Exception] = []  # what nats-py said to the error callback

    @classmethod
    async def open(cls, target: Target, connect_timeout: float) -> NatsBus:
        """Connected, and the stream there (created if missing)."""
        bus = cls(target)
        await bus._connect(connect_timeout)
        try:
            try:
                await bus._ensure_stream()
            except Exception as exc:
                bus._said_no(exc)
                raise
            bus.inbox = bus.nc.new_inbox()
            # One subscription takes every ack, counted in a callback: a third of the CPU
            # of nats-py's publish_async (a future, a semaphore and a token a message).
            await bus.nc.subscribe(
                f"{bus.inbox}.*", cb=bus.acks.take, pending_msgs_limit=-1, pending_bytes_limit=-1
            )
        except BaseException:
            await bus.close()
            raise
        return bus

    async def _connect(self, connect_timeout: float) -> None:
        """``self.nc`` connected; its callbacks are this bus's from the first byte, so a
        connection lost at any time after is seen (:attr:`lost`). Another server at the
        address (a Redis) is a BusError as soon as it is seen to be one."""
        errors = need("nats.errors", FEATURE)
        self.nc = need("nats", FEATURE).NATS()
        connecting = asyncio.ensure_future(
            self.nc.connect(
                servers=[self.target.url],
                connect_timeout=connect_timeout,
                # The publisher's own loop reconnects, and reads where the bus stands.
                allow_reconnect=False,
                # One more try, then NoServersError (0 would mean: for ever).
                max_reconnect_attempts=1,
                reconnect_time_wait=0.1,
                disconnected_cb=self._ended,
                closed_cb=self._ended,
                error_cb=self._error,
            )
        )
        try:
            try:
                await self._unless_another(connecting, connect_timeout)
            except BaseException:
                self.abort()  # nats-py leaves a connection it gave up on open
                raise
        except errors.NoServersError:
            seen = self.seen
            why = " ".join(str(seen[-1]).split()) if seen else "no server answered"
            raise ConnectionError(why) from (seen[-1] if seen else None)
        except errors.Error as exc:
            # nats-py says both a server's refusal (-ERR 'Authorization Violation') and a
            # connection ended before the server's INFO (a server going down, a proxy with
            # none behind it; or another server's first line) with a bare Error, so its
            # own words for the second are read: an outage, unless another server says
            # something else there.
            if type(exc) is errors.Error and _NO_INFO in str(exc):
                await self._another(connect_timeout)
                raise ConnectionError(" ".join(str(exc).split())) from exc
            raise
        except TimeoutError as exc:  # asyncio's: no connection, or no INFO on it
            why = f"no NATS server answered within {connect_timeout:g} s (no INFO)"
            raise ConnectionError(why) from exc
        self.js = self.nc.jetstream(timeout=ACK_TIMEOUT)

    async def _unless_another(self, connecting: asyncio.Future[None], within: float) -> None:
        """``connecting`` awaited; a BusError once another server is seen at the address.
        A NATS server sends its INFO as soon as it accepts, while a Redis says nothing
        until asked, and nats-py would wait for the INFO all of ``within``: a connection
        not made after :data:`LOOK` seconds has another look at who listens there."""
        try:
            done, _ = await asyncio.wait([connecting], timeout=min(LOOK, within))
            if not done:
                looking = asyncio.ensure_future(self._another(within - LOOK))
                try:
                    await asyncio.wait([connecting, looking], return_when=asyncio.FIRST_COMPLETED)
                    if looking.done() and not connecting.done():
                        looking.result()  # its BusError; else nothing told: go on waiting
                finally:
                    looking.cancel()
                    await asyncio.gather(looking, return_exceptions=True)
            await connecting
        finally:
            if not connecting.done():
                connecting.cancel()
                await asyncio.gather(connecting, return_exceptions=True)

    async def _another(self, within: float) -> None:
        """A BusError naming who listens at the address if a look there (a connection of
        its own: what it says first, or to :data:`~asyncsports._wire.bus.PROBE`) finds
        another server than NATS; nothing if it finds none, nothing at all, or a NATS
        server after all (within ``within`` seconds)."""
        parts = urllib.parse.urlsplit(self.target.url)
        said = b""
        with contextlib.suppress(OSError, ValueError):  # TimeoutError is an OSError
            async with asyncio.timeout(max(within, 0.1)):
                reader, writer = await asyncio.open_connection(parts.hostname, parts.port or 4222)
                try:
                    try:
                        async with asyncio.timeout(LOOK):
                            said = await reader.read(512)
                    except TimeoutError:  # nothing unasked: ask
                        writer.write(PROBE)
                        said = await reader.read(512)
                finally:
                    writer.close()
        if said and not said.startswith((b"INFO ", b"PONG")):
            raise BusError(f"{self.target.shown}: no NATS server there: {who_answered(said)}")

    async def _ended(self) -> None:
        self.lost.set()

    async def _error(self, exc: Exception) -> None:
        self.seen.append(exc)  # said by the call it fails (nats-py would log each itself)
        # nats-py hands a server's -ERR that leaves the connection open to this callback
        # as a bare Error: a permissions violation, what we sent refused.
        if self.nc is not None and type(exc) is need("nats.errors", FEATURE).Error:
            self.refusal = self.refusal or " ".join(str(exc).split())
            self.acks.done.set()

    async def _ask(self, request: Awaitable[T]) -> T:
        """``request``'s answer, or ConnectionError as soon as the connection is seen
        lost: nats-py fails no request pending on a connection that ends, so one would
        wait out its time-out (10 s) before the publisher could stop or reconnect."""
        asking = asyncio.ensure_future(request)
        lost = asyncio.ensure_future(self.lost.wait())
        try:
            await asyncio.wait([asking, lost], return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            if not asking.done():
                asking.cancel()
                await asyncio.gather(asking, return_exceptions=True)
        if asking.cancelled():
            raise ConnectionError("the connection to the NATS server is closed")
        return asking.result()

    async def _ensure_stream(self) -> None:
        errors = need("nats.js.errors", FEATURE)
        api = need("nats.js.api", FEATURE)
        subjects = f"{self.target.prefix}.>"
        try:
            info = await self._ask(self.js.stream_info(self.target.stream))
        except errors.NotFoundError:
            config = api.StreamConfig(
                name=self.target.stream,
                subjects=[subjects],
                storage=api.StorageType.FILE,
                duplicate_window=self.target.duplicate_window,
            )
            try:
                await self._ask(self.js.add_stream(config))
            except errors.APIError as exc:
                if (exc.code or 0) >= 500:
                    raise  # JetStream away for now
                # Made by someone else since the look (settings of their own; another
                # publisher, whose create nats-server 2.9 may answer "subjects overlap" to
                # a second racing it): used as one found there. Else the refusal stands.
                try:
                    info = await self._ask(self.js.stream_info(self.target.stream))
                except errors.NotFoundError:
                    raise BusError(
                        f"{self.target.shown}: cannot create the stream over {subjects}: "
                        f"{exc.description} (err_code {exc.err_code})"
                    ) from None
            else:
                return
        have = list(info.config.subjects or ())
        if subjects not in have and ">" not in have:
            raise BusError(
                f"{self.target.shown}: the stream exists with subjects {have}, not {subjects}"
            )
        self.max_msg_size = info.config.max_msg_size or -1

    async def position(self, origin: str | None) -> int:
        """The change of the stream's last message, which must be ``origin``'s (BusError
        naming it otherwise); 0 for a stream without any (new or purged)."""
        try:
            self.tail = await self._tail(origin)
        except Exception as exc:
            self._said_no(exc)
            raise
        return self.tail[0]

    def _said_no(self, exc: Exception) -> None:
        """A request ended by ``exc`` (no answer, say) after the server refused it for
        the user's permissions: that refusal (BusError)."""
        if self.refusal is not None and not isinstance(exc, BusError):
            raise BusError(f"{self.target.shown} refuses: {self.refusal}") from exc

    async def _tail(self, origin: str | None) -> tuple[int, int]:
        """``(change, stream seq)`` of the stream's last message, checked to be of
        ``origin``; ``(0, last seq)`` when it holds none."""
        errors = need("nats.js.errors", FEATURE)
        info = await self._ask(self.js.stream_info(self.target.stream))
        last = info.state.last_seq or 0
        if not last or not info.state.messages:
            return 0, last  # empty, or purged: nothing there says where the feed stood
        try:
            msg = await self._ask(self.js.get_msg(self.target.stream, seq=last))
        except errors.NotFoundError:  # deleted meanwhile: the stream is purged or trimmed
            return 0, last
        where = f"its last message ({msg.subject}, stream seq {last})"
        value = (msg.headers or {}).get(ID)
        if value is None:
            raise BusError(
                f"{self.target.shown}: {where} was not published by asyncsports (no {ID})"
            )
        try:
            theirs, seq = seq_of_msg_id(value)
        except ValueError:
            raise BusError(
                f"{self.target.shown}: {where} was not published by asyncsports ({ID} {value!r})"
            ) from None
        if theirs != origin:
            mine = f"this one's is {origin}" if origin else "this one has no change yet"
            raise BusError(
                f"{self.target.shown} holds the changes of another database: {where} is "
                f"{ID} {value!r} (origin {theirs}; {mine}): give this one a prefix or stream "
                "of its own (?prefix=... / ?stream=...)"
            )
        return seq, last

    async def publish(self, batch: Sequence[Message], origin: str, after: int) -> int:
        """``batch`` published right after change ``after``: its first message expects
        the stream's last sequence to be that change's, each next one the message id of
        the one before, so the stream refuses any of them that would not follow ours
        (another database's publisher in between). Each message published with a reply
        subject for its ack (the stream answers each); returns once every ack of the
        batch is in. A change over the server's or the stream's size limit is refused
        before it is sent, the changes before it published."""
        if self.lost.is_set():
            raise ConnectionError("the connection to the NATS server is closed")
        over = self._oversized(batch, origin)
        if over is not None:
            if over[0]:  # the changes before it go on, so the stream stops right before it
                await self._publish(batch[: over[0]], origin, after)
            raise BusError(over[1])
        return await self._publish(batch, origin, after)

    def _oversized(self, batch: Sequence[Message], origin: str) -> tuple[int, str] | None:
        """The first change of ``batch`` over the server's max_payload or the stream's
        max_msg_size (headers included, as the server counts): its index, why."""
        limit, name = self.nc.max_payload, "the server's max_payload"
        if 0 < self.max_msg_size < limit:
            limit, name = self.max_msg_size, "the stream's max_msg_size"
        # Our headers: the NATS/1.0 line, the id, an expectation (at most), the blank line.
        room = limit - (12 + 2 * (len(ID) + len(origin) + 24) + 32)
        for i, m in enumerate(batch):
            if len(m.body) > room:
                size = len(m.body) + _headers_size(origin, m.seq)
                if size > limit:
                    label = name.rpartition(" ")[2]
                    return i, (
                        f"{self.target.shown}: change {m.seq} refused: it is {size} bytes "
                        f"with its headers, over {name} ({label} {limit})"
                    )
        return None

    async def _publish(self, batch: Sequence[Message], origin: str, after: int) -> int:
        held = 0
        pending = list(batch)
        for _ in range(_TRIES):
            change, at = self.tail if self.tail is not None else await self._tail(origin)
            self.tail = (change, at)
            if change > after:  # ours, further on: another publisher of this database
                held += sum(1 for m in pending if m.seq <= change)
                pending = [m for m in pending if m.seq > change]
                after = change
            if not pending:
                return held
            if change != after:  # behind where we stood (purged): the publisher reads again
                self.tail = None
                raise ConnectionError(
                    f"{self.target.shown}: the stream is at change {change}, not {after}: "
                    "reading where it stands again"
                )
            self.tail = None  # not known until the acks are in
            acks = await self._send(pending, origin, at)
            held += acks.duplicates
            if acks.error is None:
                self.tail = (pending[-1].seq, acks.last)
                return held
            index, code, err_code, text = acks.error
            m = pending[index]
            if err_code in _MOVED:  # not after ours: read where it stands, check whose
                pending = [pending[i] for i in acks.refused]
                continue
            await self._refused(m, code, err_code, text)
        raise ConnectionError(
            f"{self.target.shown}: the stream moved under each of {_TRIES} tries to publish "
            f"changes {batch[0].seq} to {batch[-1].seq}"
        )

    async def _send(self, batch: Sequence[Message], origin: str, at: int) -> Acks:
        """Each of ``batch`` sent, the first expecting the stream's last sequence
        ``at``, each next the message id before it; the acks once all are in."""
        reply = self.acks.expect(len(batch), self.inbox)
        subject, send = self.target.subject, self.nc.publish
        first, *rest = batch
        before = msg_id(origin, first.seq)
        await send(
            subject(first.sport, first.table),
            first.body,
            reply=reply,
            headers={ID: before, LAST_SEQ: str(at)},
        )
        for m in rest:
            this = msg_id(origin, m.seq)
            await send(
                subject(m.sport, m.table), m.body, reply=reply, headers={ID: this, LAST_ID: before}
            )
            before = this
        done = asyncio.ensure_future(self.acks.done.wait())
        lost = asyncio.ensure_future(self.lost.wait())
        try:
            await asyncio.wait(
                [done, lost], timeout=ACK_TIMEOUT, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            done.cancel()
            lost.cancel()
        span = f"changes {batch[0].seq} to {batch[-1].seq}"
        if self.refusal is not None:
            raise BusError(f"{self.target.shown}: {span} refused: {self.refusal}")
        if self.acks.away is not None:
            raise ConnectionError(f"{self.target.shown}: {self.acks.away}, publishing {span}")
        if not self.acks.done.is_set():
            why = "lost" if self.lost.is_set() else f"no ack within {ACK_TIMEOUT:g} s"
            raise TimeoutError(f"{self.target.shown}: {why} publishing {span}")
        return self.acks

    async def _refused(self, m: Message, code: int, err_code: int, text: str) -> None:
        """Raise what the stream's refusal of change ``m`` says: a limit of the stream
        (BusError naming it), or the stream away for now (ConnectionError)."""
        what = f"{self.target.shown}: change {m.seq} refused"
        if err_code == _STORE_FAILED:  # the store's own error: a limit, or trouble
            limit = await self._full(len(m.body))
            if limit is None:
                raise ConnectionError(f"{what} for now: {text}")
            raise BusError(f"{what}: the stream is full ({limit}, discard new): {text}")
        if err_code == _TOO_BIG:
            raise BusError(f"{what}: {len(m.body)} bytes, over the stream's max_msg_size ({text})")
        if code >= 500:
            raise ConnectionError(f"{what} for now: {text} (err_code {err_code})")
        raise BusError(f"{what}: {text} (err_code {err_code})")

    async def _full(self, size: int) -> str | None:
        """Which of the stream's limits (discard new) refuses a message of ``size``
        bytes now; None: none (the store failed otherwise)."""
        api = need("nats.js.api", FEATURE)
        info = await self._ask(self.js.stream_info(self.target.stream))
        config, state = info.config, info.state
        if config.discard != api.DiscardPolicy.NEW:
            return None
        max_msgs, max_bytes = config.max_msgs or 0, config.max_bytes or 0
        per_subject = config.max_msgs_per_subject or 0
        if max_msgs > 0 and state.messages >= max_msgs:
            return f"max_msgs {max_msgs}"
        if max_bytes > 0 and state.bytes + size >= max_bytes:
            return f"max_bytes {max_bytes}"
        if per_subject > 0 and getattr(config, "discard_new_per_subject", False):
            return f"max_msgs_per_subject {per_subject}"
        return f"max_bytes {max_bytes}" if max_bytes > 0 else None

    async def ping(self) -> None:
        """A PING answered (nats-py's flush), on a connection not seen lost."""
        if self.lost.is_set():
            raise ConnectionError("the connection to the NATS server is closed")
        await self._ask(self.nc.flush(timeout=ACK_TIMEOUT))

    async def close(self) -> None:
        """Close the connection (what is pending is dropped: its acks are not awaited)."""
        if not self.nc.is_closed:
            try:
                async with asyncio.timeout(5.0):
                    await self.nc.close()
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
    batch, so a late ack of a batch given up on is not counted for the next). The stream
    acks a connection's messages in the order sent: the n-th ack is the n-th message's."""

    def __init__(self) -> None:
        self.done = asyncio.Event()
        self.duplicates = 0
        self.last = 0
        """The stream seq of the batch's last message (its ack's)."""
        self.error: tuple[int, int, int, str] | None = None
        """The first refusal: the message's index, the code, err_code and description."""
        self.refused: list[int] = []
        """The indexes of the messages refused."""
        self.away: str | None = None
        """Why the stream is not there (a status without a body: 503, no responders)."""
        self._want = self._got = self._batch = 0
        self._reply = ""

    def expect(self, n: int, inbox: str) -> str:
        """A new batch of ``n`` messages: the reply subject its acks come to."""
        self._batch += 1
        self._want = n
        self._got = 0
        self.duplicates = 0
        self.last = 0
        self.error = None
        self.refused = []
        self.away = None
        self.done.clear()
        self._reply = f"{inbox}.{self._batch}"
        return self._reply

    async def take(self, msg: Any) -> None:
        """One ack: ``{"stream":...,"seq":...}`` (``"duplicate": true`` when dropped as
        one), an API error, or a status without a body (503: no responders)."""
        if msg.subject != self._reply:
            return  # a batch given up on
        data: bytes = msg.data
        if not data:
            status = (msg.headers or {}).get("Status", "")
            self.away = self.away or f"no responders (status {status or 'none'})"
            self.done.set()
            return
        index = self._got
        self._got += 1
        if b'"error"' in data:
            self.refused.append(index)
            if self.error is None:
                try:
                    err = json.loads(data)["error"]
                    self.error = (
                        index,
                        int(err.get("code") or 0),
                        int(err.get("err_code") or 0),
                        str(err.get("description")),
                    )
                except (ValueError, KeyError, TypeError, AttributeError):
                    self.error = (index, 0, 0, data.decode(errors="replace"))
        elif b'"duplicate"' in data:  # "duplicate": true (2.9 writes a space), or not
            self.duplicates += 1
        if self._got >= self._want:
            if self.error is None:
                try:
                    self.last = int(json.loads(data)["seq"])
                except (ValueError, KeyError, TypeError):
                    self.error = (index, 0, 0, data.decode(errors="replace"))
            self.done.set()


def _headers_size(origin: str, seq: int) -> int:
    """The bytes of a message's headers as nats-py writes them (the most they are)."""
    this = msg_id(origin, seq)
    return len(f"NATS/1.0\r\n{ID}: {this}\r\n{LAST_ID}: {msg_id(origin, seq - 1)}\r\n\r\n")


def classify(exc: BaseException) -> Trouble | None:
    """:func:`~asyncsports.bus._bus.classify` of a nats-py error, by its type: a
    connection lost or refused, no answer, JetStream not there (no responders) or an API
    error of code 500 or more (503: unavailable) pass; any other API error (a bad
    request, a limit) or error of the library (credentials refused) does not."""
    errors = need("nats.errors", FEATURE)
    js = need("nats.js.errors", FEATURE)
    away = (
        errors.TimeoutError,
        errors.NoRespondersError,
        errors.StaleConnectionError,
        errors.OutboundBufferLimitError,
        errors.ConnectionClosedError,
        errors.NoServersError,
        errors.ConnectionDrainingError,
        errors.ConnectionReconnectingError,
    )
    if isinstance(exc, away):
        return "away"
    if isinstance(exc, js.ServiceUnavailableError | js.ServerError):
        return "away"  # 503 and 500 (nats-py may leave their code None)
    if isinstance(exc, js.APIError):
        return "away" if (exc.code or 0) >= 500 else "refused"
    if isinstance(exc, errors.Error):
        return "refused"
    return "away" if isinstance(exc, OSError) else None
