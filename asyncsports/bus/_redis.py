"""The change feed on Redis Streams (redis-py): one stream per table.

Each change is the entry ``<seq>-0`` of the stream ``<prefix>:<table>``, with two
fields: ``change``, the message, and ``origin``, the database that wrote it
(:func:`~asyncsports._wire.bus.origin`). The key ``<prefix>:origin`` claims the streams
for one database. A batch is one ``MULTI``/``EXEC`` transaction of ``XADD``s (and, the
first time, the claim), run only if nothing changed since the publisher looked at the
bus: it ``WATCH``es the claim and the streams, reads them (the claim ours or unset, the
top entry of each stream ours), then sends the transaction; Redis runs it whole or not
at all (``EXEC`` answers nothing when a watched key was written meanwhile: look again). So
a publisher killed at any point has published a prefix of the feed, where it stands is
the largest ``last-generated-id`` of the streams, and the changes of two databases never
share a stream. A change already on its stream (its id not above the top) is counted,
not sent again.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import Any

from asyncsports._optional import need
from asyncsports._wire.bus import (
    ACK_TIMEOUT,
    Message,
    Target,
    Trouble,
    seq_of_entry,
    who_answered,
)
from asyncsports.errors import BusError
from asyncsports.store import MIRROR_COLUMNS

__all__ = ["RedisBus", "classify"]

FEATURE = "publishing the change feed to Redis (--to redis://...)"
TABLES = tuple(MIRROR_COLUMNS)


class RedisBus:
    """The :class:`~asyncsports.bus._bus.Bus` of a ``redis://`` target."""

    def __init__(self, target: Target, client: Any) -> None:
        self.target = target
        self.client = client
        trim = (b"MAXLEN", b"~", b"%d" % target.maxlen) if target.maxlen else ()
        # XADD <key> [MAXLEN ~ n] <seq>-0 change <body> origin <origin>, to be filled in
        # (no % in the fixed parts)
        self._xadd = b"*%d\r\n%s%%s%s$%%d\r\n%%s\r\n$6\r\nchange\r\n$%%d\r\n%%s\r\n%%s" % (
            7 + len(trim),
            _bulk(b"XADD"),
            b"".join(map(_bulk, trim)),
        )
        self._keys = {t: _bulk(target.key(t).encode()) for t in TABLES}  # packed
        self._claim = _bulk(self.origin_key.encode())
        self._look = b"".join(
            [
                _command(
                    b"WATCH", self.origin_key.encode(), *(target.key(t).encode() for t in TABLES)
                ),
                *(_command(b"XINFO", b"STREAM", target.key(t).encode()) for t in TABLES),
                _command(b"GET", self.origin_key.encode()),
            ]
        )
        self._tails: dict[str, bytes] = {}  # origin -> the packed field of each entry

    @classmethod
    async def open(cls, target: Target, connect_timeout: float) -> RedisBus:
        """Connected (a PING answered) within ``connect_timeout`` seconds."""
        aioredis = need("redis.asyncio", FEATURE)
        retry = need("redis.asyncio.retry", FEATURE)
        backoff = need("redis.backoff", FEATURE)
        # No socket_timeout: with one, redis-py writes under asyncio.wait_for, which on
        # Python 3.11 can swallow a cancel (CPython gh-86296; a publisher cancelled as a
        # write drained published on). Each call is bounded here instead (_answer).
        client = aioredis.Redis.from_url(
            target.url,
            socket_connect_timeout=connect_timeout,
            # The publisher's own loop reconnects and reads where it stands; a retry
            # inside redis-py would only hide an outage from it.
            retry=retry.Retry(backoff.NoBackoff(), 0),
        )
        try:
            async with _answer(target, connect_timeout + ACK_TIMEOUT):
                await client.ping()
        except need("redis.exceptions", FEATURE).InvalidResponse as exc:
            await client.aclose()
            # Not RESP: another server listens there (a NATS server's INFO comes first).
            raise BusError(f"{target.shown}: no Redis server there: {_who(exc)}") from exc
        except BaseException:
            await client.aclose()
            raise
        return cls(target, client)

    @property
    def origin_key(self) -> str:
        return f"{self.target.prefix}:origin"

    async def position(self, origin: str | None) -> int:
        """The largest ``last-generated-id`` of the tables' streams, once the claim and
        the top entry of each stream are checked to be ``origin``'s."""
        async with _answer(self.target), self._connection() as conn:
            await conn.send_packed_command([self._look, _UNWATCH])
            tops, claimed = await self._read_look(conn)
            await conn.read_response()  # UNWATCH's OK
        return self._check(tops, claimed, origin)

    async def publish(self, batch: Sequence[Message], origin: str, after: int) -> int:
        """The batch's ``XADD``s (and the claim, the first time) in one transaction, sent
        once the bus is looked at under ``WATCH`` and found as ``after`` left it (or
        ahead, by this database's changes: those are counted, not sent); looked at again
        when ``EXEC`` finds a watched key written meanwhile. The commands are packed here
        (RESP, each a few bytes around the message) rather than by redis-py one call at
        a time: that was a quarter of the client's CPU per change. Any failure drops the
        connection, so no reply is left unread on it."""
        tail = self._tails.get(origin)
        if tail is None:
            tail = self._tails[origin] = b"$6\r\norigin\r\n" + _bulk(origin.encode())
        while True:
            async with _answer(self.target), self._connection() as conn:
                done = await self._round(conn, batch, origin, after, tail)
            if done is not None:
                return len(batch) - done

    async def _round(
        self, conn: Any, batch: Sequence[Message], origin: str, after: int, tail: bytes
    ) -> int | None:
        """One look and one transaction: how many of ``batch`` were sent (None: a watched
        key changed, look again)."""
        keys, xadd = self._keys, self._xadd
        await conn.send_packed_command(self._look)
        tops, claimed = await self._read_look(conn)
        seq = self._check(tops, claimed, origin)
        if seq < after:
            raise BusError(
                f"{self.target.shown}: the streams went back from change {after} to "
                f"{seq} while publishing (deleted or flushed by someone else)"
            )
        parts, sent = [_MULTI], []
        if claimed is None:
            parts.append(
                b"*4\r\n$3\r\nSET\r\n%s%s$2\r\nNX\r\n" % (self._claim, _bulk(origin.encode()))
            )
        for m in batch:
            if m.seq <= tops[m.table][0]:
                continue  # on its stream already (ours: checked): a duplicate
            entry, body = b"%d-0" % m.seq, m.body
            parts.append(xadd % (keys[m.table], len(entry), entry, len(body), body, tail))
            sent.append(m)
        parts.append(_EXEC)
        await conn.send_packed_command(parts)
        done = await self._read_transaction(conn, sent, claimed is None)
        return len(sent) if done else None

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[Any]:
        """A connection of the pool's, connected (its handshake within the caller's
        :func:`_answer`: with no socket_timeout, redis-py 5.0 bounds none of it), dropped
        on any failure so that no reply is left unread on it, then given back."""
        pool = self.client.connection_pool
        try:
            conn = await pool.get_connection()
        except TypeError:  # redis-py before 5.3 wants a command's name
            conn = await pool.get_connection("MULTI")
        try:
            yield conn
        except BaseException:
            await conn.disconnect(nowait=True)
            raise
        finally:
            await pool.release(conn)

    async def _read_look(self, conn: Any) -> tuple[dict[str, tuple[int, str, Any]], str | None]:
        """The answers to ``self._look``: each table's ``(seq, last-generated-id,
        last-entry)`` (``(0, "0-0", None)``: no stream), and the claim."""
        errors = need("redis.exceptions", FEATURE)
        await conn.read_response()  # WATCH's OK
        tops: dict[str, tuple[int, str, Any]] = {}
        for table in TABLES:
            try:
                info = await conn.read_response()
            except errors.ResponseError as exc:
                if classify(exc) != "refused":
                    raise
                if "no such key" in str(exc).lower():
                    tops[table] = (0, "0-0", None)
                    continue
                why = " ".join(str(exc).split()) or type(exc).__name__
                raise BusError(
                    f"{self.target.shown}: stream {self.target.key(table)}: {why}"
                ) from exc
            last = _text(_field(info, "last-generated-id"))
            try:
                seq = seq_of_entry(last)
            except ValueError:
                seq = -1
            tops[table] = (seq, last, _field(info, "last-entry"))
        claimed = await conn.read_response()
        return tops, None if claimed is None else _text(claimed)

    def _check(
        self, tops: dict[str, tuple[int, str, Any]], claimed: str | None, ours: str | None
    ) -> int:
        """Where the feed stands, if every stream's top entry and the claim are ``ours``;
        a BusError naming the stream and the entry otherwise."""
        mine = f"this one's is {ours}" if ours else "this one has no change yet"
        at = 0
        for table, (seq, last, entry) in tops.items():
            top = _text(entry[0]) if entry else last
            if not (_ours_id(last) and _ours_id(top)):
                why = "not an entry id of asyncsports (<seq>-0)"
            elif seq == 0:
                continue
            elif claimed is None:
                why = f"but no key {self.origin_key} says which database wrote it"
            elif entry is None:
                why = None  # its entries deleted: the claim says whose they were
            elif (theirs := _origin_field(entry[1])) is None:
                why = f"without the field origin ({mine})"
            elif theirs != ours:
                why = f"of another database (origin {theirs}, {mine})"
            else:
                why = None
            if why is not None:
                raise BusError(
                    f"{self.target.shown}: stream {self.target.key(table)} holds entry {top} "
                    f"{why}: give this database a prefix of its own (?prefix=...)"
                )
            at = max(at, seq)
        if claimed is not None and claimed != ours:
            raise BusError(
                f"{self.target.shown}: {self.origin_key} claims it for another database "
                f"(origin {claimed}, {mine}): give this database a prefix of its own "
                "(?prefix=...)"
            )
        return at

    async def _read_transaction(self, conn: Any, sent: list[Message], claims: bool) -> bool:
        """The answers to MULTI, the claim, the XADDs, EXEC: True once it ran, False when
        a watched key was written meanwhile (nothing of it ran)."""
        errors = need("redis.exceptions", FEATURE)
        await conn.read_response()  # MULTI's OK
        refused: tuple[Message | None, BaseException] | None = None
        # Each command is QUEUED or refused (out of memory, no permission, ...), which
        # aborts the transaction: nothing of it runs; classify() tells an outage that
        # passes from a refusal.
        for m in ([None] if claims else []) + sent:
            try:
                await conn.read_response()
            except errors.ResponseError as exc:
                refused = refused or (m, exc)
        try:
            got = await conn.read_response()
        except errors.ResponseError as exc:
            if refused is None:
                raise
            got = exc
        if refused is not None:
            self._refuse(*refused)
        if got is None:
            return False  # a watched key written since the look: look again
        if claims and got[0] is None:
            return False
        for m, result in zip(sent, got[1:] if claims else got, strict=True):
            if isinstance(result, BaseException):
                self._refuse(m, result)
        return True

    def _refuse(self, m: Message | None, exc: BaseException) -> None:
        """Raise ``exc`` as it is if it is an outage; a BusError naming the change and
        its stream if the bus refuses it."""
        if classify(exc) != "refused":
            raise exc
        what = (
            f"change {m.seq} ({self.target.key(m.table)})" if m else f"the claim {self.origin_key}"
        )
        why = " ".join(str(exc).split()) or type(exc).__name__
        raise BusError(f"{self.target.shown}: {what} refused: {why}") from exc

    async def ping(self) -> None:
        """PING."""
        async with _answer(self.target):
            await self.client.ping()

    async def close(self) -> None:
        """Close the connection pool."""
        await self.client.aclose()

    def abort(self) -> None:
        """Drop the connections now."""
        pool = self.client.connection_pool  # redis-py keeps no public list of them
        conns = [
            *getattr(pool, "_available_connections", ()),
            *getattr(pool, "_in_use_connections", ()),
        ]
        for conn in conns:
            transport = getattr(getattr(conn, "_writer", None), "transport", None)
            if transport is not None:
                transport.abort()


_MULTI = b"*1\r\n$5\r\nMULTI\r\n"
_EXEC = b"*1\r\n$4\r\nEXEC\r\n"
_UNWATCH = b"*1\r\n$7\r\nUNWATCH\r\n"


def _who(exc: BaseException) -> str:
    """Who answered, from redis-py's error for a reply that is not RESP: its message is
    ``Protocol Error: `` and the bytes read, as Python writes them (redis-py 5.0 to 8)."""
    said = str(exc).partition("Protocol Error: ")[2]
    try:
        line = ast.literal_eval(said)
    except (ValueError, SyntaxError):
        line = None
    if not isinstance(line, bytes):
        return f"what answered is not Redis ({' '.join(str(exc).split())[:80]})"
    return who_answered(line)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _ours_id(entry: str) -> bool:
    """An entry id asyncsports writes: ``<seq>-0``."""
    ms, sep, n = entry.partition("-")
    return ms.isdigit() and sep == "-" and n == "0"


def _origin_field(fields: Any) -> str | None:
    """The ``origin`` field of an entry's fields, as read raw (a flat list) or a dict."""
    if isinstance(fields, dict):
        items = list(fields.items())
    else:
        flat = list(fields or ())
        items = list(zip(flat[::2], flat[1::2], strict=False))
    for k, v in items:
        if _text(k) == "origin":
            return _text(v)
    return None


def _bulk(value: bytes) -> bytes:
    """A RESP bulk string."""
    return b"$%d\r\n%s\r\n" % (len(value), value)


def _command(*args: bytes) -> bytes:
    """A command as RESP writes it: an array of bulk strings."""
    return b"*%d\r\n%s" % (len(args), b"".join(map(_bulk, args)))


def _field(info: Any, name: str) -> Any:
    """A field of ``XINFO STREAM``'s answer, as redis-py parsed it (a dict) or not."""
    if isinstance(info, dict):
        for k, v in info.items():
            if (k.decode() if isinstance(k, bytes) else k) == name:
                return v
        return None
    pairs = list(info)
    for k, v in zip(pairs[::2], pairs[1::2], strict=True):
        if (k.decode() if isinstance(k, bytes) else k) == name:
            return v
    return None


# Codes of a refusal that passes (Redis persisting nothing, short of replicas, busy with
# a script; a cluster failing over): read from the text only where redis-py gives them no
# class (none of these in 8.x; TRYAGAIN, CLUSTERDOWN, MASTERDOWN in 5.x either).
_BUSY = frozenset({"MISCONF", "NOREPLICAS", "BUSY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN"})


def classify(exc: BaseException) -> Trouble | None:
    """:func:`~asyncsports.bus._bus.classify` of a redis-py error, by its class: away
    for a connection lost or timed out and for Redis loading its data, out of memory,
    read-only (a replica), failing over; refused for anything else of Redis's
    (credentials, ACL, a command it will not take). redis-py strips the error code from
    the message of the errors it gives a class, so the text is read only for those it
    gives none."""
    errors = need("redis.exceptions", FEATURE)
    if isinstance(exc, errors.AuthenticationError | errors.AuthorizationError):
        return "refused"
    if isinstance(exc, errors.ConnectionError | errors.TimeoutError):
        return "away"  # BusyLoadingError too: a restarted Redis reading its AOF
    passing = (
        errors.OutOfMemoryError,
        errors.ReadOnlyError,
        errors.TryAgainError,
        errors.ClusterDownError,
    )
    if isinstance(exc, passing):
        return "away"
    if isinstance(exc, errors.ResponseError):
        code = getattr(exc, "status_code", None) or str(exc).split(" ", 1)[0]
        return "away" if str(code).upper() in _BUSY else "refused"
    if isinstance(exc, errors.RedisError):
        return "refused"
    return "away" if isinstance(exc, OSError) else None


@contextlib.asynccontextmanager
async def _answer(target: Target, seconds: float | None = None) -> AsyncIterator[None]:
    """Redis's answers within ``seconds`` (:data:`ACK_TIMEOUT`), or a TimeoutError saying
    so: the bound redis-py's socket_timeout kept before (see :meth:`RedisBus.open`)."""
    seconds = ACK_TIMEOUT if seconds is None else seconds
    bound = asyncio.timeout(seconds)
    try:
        async with bound:
            yield
    except Exception:  # redis-py words our cancel its own way ("Timeout reading from")
        if not bound.expired():
            raise
        raise TimeoutError(f"no answer from {target.shown} within {seconds:g} s") from None
