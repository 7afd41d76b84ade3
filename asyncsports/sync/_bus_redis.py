"""The change feed on Redis Streams (redis-py): one stream per table.

Each change is the entry ``<seq>-0`` of the stream ``<prefix>:<table>``, with one field,
``change``, holding the message. A batch is one ``MULTI``/``EXEC`` transaction of
``XADD``s: Redis runs it whole or not at all (a connection lost before ``EXEC`` runs
none of it, one refused while queued aborts it), so a publisher killed at any point has
published a prefix of the feed, and where it stands is the largest
``last-generated-id`` of the streams. A change sent twice is refused by its stream (its
id is not above the top), which also makes a transaction sent again harmless. The key
``<prefix>:origin`` names the database whose changes the streams hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from asyncsports._optional import need
from asyncsports._wire.bus import ACK_TIMEOUT, Message, Target, Trouble, seq_of_entry
from asyncsports.errors import BusError
from asyncsports.store import MIRROR_COLUMNS

__all__ = ["RedisBus", "classify"]

FEATURE = "publishing the change feed to Redis (--to redis://...)"
TABLES = tuple(MIRROR_COLUMNS)


class RedisBus:
    """The :class:`~asyncsports.sync._bus.Bus` of a ``redis://`` target."""

    def __init__(self, target: Target, client: Any) -> None:
        self.target = target
        self.client = client
        trim = (b"MAXLEN", b"~", b"%d" % target.maxlen) if target.maxlen else ()
        self._trim_bytes = b"".join(map(_bulk, trim))
        self._xadd_head = b"*%d\r\n%s" % (5 + len(trim), _bulk(b"XADD"))
        self._keys: dict[str, bytes] = {}  # table -> its stream's key, packed

    @classmethod
    async def open(cls, target: Target, connect_timeout: float) -> RedisBus:
        """Connected (a PING answered) within ``connect_timeout`` seconds."""
        aioredis = need("redis.asyncio", FEATURE)
        retry = need("redis.asyncio.retry", FEATURE)
        backoff = need("redis.backoff", FEATURE)
        client = aioredis.Redis.from_url(
            target.url,
            socket_connect_timeout=connect_timeout,
            socket_timeout=ACK_TIMEOUT,
            # The publisher's own loop reconnects and reads where it stands; a retry
            # inside redis-py would only hide an outage from it.
            retry=retry.Retry(backoff.NoBackoff(), 0),
        )
        try:
            await client.ping()
        except BaseException:
            await client.aclose()
            raise
        return cls(target, client)

    async def position(self, origin: str | None) -> int:
        """The largest ``last-generated-id`` of the tables' streams, the origin key
        checked (a stand-in until the ``redis`` helper's rewrite lands)."""
        response = need("redis.exceptions", FEATURE).ResponseError
        pipe = self.client.pipeline(transaction=False)
        for table in TABLES:
            pipe.execute_command("XINFO", "STREAM", self.target.key(table))
        pipe.get(self.origin_key)
        got = await pipe.execute(raise_on_error=False)
        seq = 0
        for table, info in zip(TABLES, got, strict=False):
            if isinstance(info, response):
                if "no such key" in str(info).lower():
                    continue
                raise BusError(f"{self.target.shown}: {table}'s stream: {info}")
            last = _field(info, "last-generated-id")
            try:
                seq = max(seq, seq_of_entry(last))
            except ValueError:
                raise BusError(
                    f"{self.target.shown}: stream {self.target.key(table)} holds entries "
                    f"not published by asyncsports (last id {last!r})"
                ) from None
        theirs = got[-1]
        theirs = theirs.decode() if isinstance(theirs, bytes) else theirs
        if theirs is not None and origin is not None and theirs != origin:
            raise BusError(
                f"{self.target.shown} holds the changes of another database (origin "
                f"{theirs}, this one's is {origin}): give this one a prefix or stream "
                "of its own (?prefix=... / ?stream=...)"
            )
        return seq

    @property
    def origin_key(self) -> str:
        return f"{self.target.prefix}:origin"

    async def publish(self, batch: Sequence[Message], origin: str, after: int) -> int:
        """One transaction of the batch's ``XADD``s (and the origin, set if unset),
        written in one go on a connection of the pool: ``MULTI``, the commands, ``EXEC``,
        then their replies read. The commands are packed here (RESP, each a few bytes
        around the message) rather than by redis-py one call at a time: that was a
        quarter of the client's CPU per change. Any failure drops the connection, so no
        reply is left unread on it."""
        errors = need("redis.exceptions", FEATURE)
        keys = self._keys
        parts = [_MULTI, _command(b"SET", self.origin_key.encode(), origin.encode(), b"NX")]
        head = self._xadd_head
        for m in batch:
            key = keys.get(m.table)
            if key is None:
                key = keys[m.table] = _bulk(self.target.key(m.table).encode())
            entry = b"%d-0" % m.seq
            parts.append(b"%s%s%s$%d\r\n%s\r\n$6\r\nchange\r\n$%d\r\n%s\r\n" % (
                head, key, self._trim_bytes, len(entry), entry, len(m.body), m.body,
            ))  # fmt: skip
        parts.append(_EXEC)
        pool = self.client.connection_pool
        try:
            conn = await pool.get_connection()
        except TypeError:  # redis-py before 5.3 wants a command's name
            conn = await pool.get_connection("MULTI")
        try:
            await conn.send_packed_command(parts)
            await conn.read_response()  # MULTI's OK
            # The SET, then each XADD: QUEUED, or refused (out of memory, say), which
            # aborts the transaction: nothing of it is run, and classify() tells an
            # outage that passes from a refusal.
            for _ in range(len(batch) + 1):
                await conn.read_response()
            got = await conn.read_response()
        except BaseException:
            await conn.disconnect(nowait=True)
            raise
        finally:
            await pool.release(conn)
        duplicates = 0
        for m, result in zip(batch, got[1:], strict=True):
            if isinstance(result, errors.ResponseError):
                if "equal or smaller" in str(result):
                    duplicates += 1  # published before: its stream refuses it again
                    continue
                raise BusError(f"{self.target.shown}: change {m.seq} refused: {result}")
        return duplicates

    async def ping(self) -> None:
        """PING."""
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


# A refusal that passes: Redis out of memory, loading its data, a replica, a cluster
# failing over (their error codes, the first word of the error).
_BUSY = ("OOM", "MISCONF", "LOADING", "READONLY", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN",
         "NOREPLICAS", "BUSY", "EXECABORT")  # fmt: skip


def classify(exc: BaseException) -> Trouble | None:
    """:func:`~asyncsports.sync._bus.classify` of a redis-py error."""
    errors = need("redis.exceptions", FEATURE)
    if isinstance(exc, errors.AuthenticationError | errors.AuthorizationError):
        return "refused"
    if isinstance(exc, errors.ConnectionError | errors.TimeoutError):
        return "away"  # BusyLoadingError too: a restarted Redis reading its AOF
    if isinstance(exc, errors.ResponseError):
        return "away" if str(exc).split(" ", 1)[0].upper() in _BUSY else "refused"
    if isinstance(exc, errors.RedisError):
        return "refused"
    return "away" if isinstance(exc, OSError) else None
