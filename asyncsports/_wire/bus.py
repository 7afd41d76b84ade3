"""The change feed on a bus, the pure part: where a change goes and what it says; no I/O.

A change of the mirror (a line of its ``changes`` table) becomes one message:
:func:`message` writes its body, the JSON object that ``asyncsports changes`` prints
(``seq``, ``op``, ``table``, ``key``, ``committed_at``, ``record``), the record embedded
as stored rather than decoded and encoded again. :class:`Target` is a bus URL read:

- ``redis://host:port/db``: one Redis stream per table, ``<prefix>:<table>``, each
  entry's id ``<seq>-0`` (so Redis itself refuses a change published twice to its
  stream), trimmed to about ``maxlen`` entries;
- ``nats://host:port``: one JetStream stream (``stream``) over the subjects
  ``<prefix>.<sport>.<table>``, each message's ``Nats-Msg-Id`` ``<origin>:<seq>`` (so
  the stream's duplicate window drops a second publish).

The ``origin`` names the database: a digest of its first change's commit time, which a
copy keeps and another database does not share (:func:`origin`).
"""

from __future__ import annotations

import hashlib
import re
import urllib.parse
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from asyncsports._wire.secrets import hide_urls, split_userinfo

__all__ = [
    "ACK_TIMEOUT",
    "LAG_BUCKETS",
    "Lags",
    "Message",
    "Target",
    "Trouble",
    "change_json",
    "compact",
    "entry_id",
    "message",
    "msg_id",
    "origin",
    "parse_target",
    "seq_of_entry",
    "seq_of_msg_id",
    "sport_of",
]

Kind = Literal["redis", "nats"]

Trouble = Literal["away", "refused"]
"""What an error of a bus says: it is ``away`` for now (wait, then connect again), or it
``refused`` what was asked (credentials, a request it will not take): no use waiting."""

MAXLEN = 1_000_000
"""Entries a Redis stream is trimmed to (about: ``MAXLEN ~``) unless the URL says."""

ACK_TIMEOUT = 10.0
"""Seconds a batch may wait for the bus's acks before the connection counts as lost."""

DUPLICATE_WINDOW = 120.0
"""Seconds JetStream remembers a message id (a stream the publisher creates)."""

# Sports of the tables whose rows name none: the live stream events and snooker's.
_SPORTLESS = {"events": "streaming", "snooker_tournaments": "snooker"}
_TOKEN = re.compile(r"[^A-Za-z0-9_-]")  # what a NATS subject token may not hold, and more
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_KEY = re.compile(r"[^\s*>]{1,200}")

_OPTIONS: dict[Kind, tuple[str, ...]] = {
    "redis": ("prefix", "maxlen"),
    "nats": ("prefix", "stream", "duplicate_window"),
}


@dataclass(frozen=True)
class Target:
    """A bus and where on it the changes go, read from its URL by :func:`parse_target`."""

    kind: Kind
    url: str
    """The URL to connect to (its query, which is ours, taken off)."""
    prefix: str = "asyncsports"
    """Redis: the streams' key prefix; NATS: the subjects' first token."""
    stream: str = "ASYNCSPORTS"
    """NATS: the JetStream stream."""
    maxlen: int = MAXLEN
    """Redis: entries per stream kept, about (0: never trimmed)."""
    duplicate_window: float = DUPLICATE_WINDOW
    """NATS: seconds a message id is remembered (for a stream created here)."""

    @property
    def shown(self) -> str:
        """The target for messages and the lease's name: its URL without userinfo (the
        secrets policy's rule: up to the last ``@``, whatever the password holds), query
        or fragment."""
        where = split_userinfo(self.url)[0].partition("?")[0].partition("#")[0]
        if self.kind == "redis":
            return f"{hide_urls(where)} {self.prefix}:*"
        return f"{hide_urls(where)} stream {self.stream} ({self.prefix}.>)"

    def key(self, table: str) -> str:
        """Redis: the stream of ``table``."""
        return f"{self.prefix}:{table}"

    def subject(self, sport: str, table: str) -> str:
        """NATS: the subject of a change of ``table`` for ``sport``."""
        return f"{self.prefix}.{sport}.{table}"


def parse_target(url: str) -> Target:
    """The :class:`Target` that ``url`` names: ``redis://`` (or ``rediss://``,
    ``unix://``) or ``nats://`` (or ``tls://``), with options in its query (Redis:
    ``prefix``, ``maxlen``; NATS: ``prefix``, ``stream``, ``duplicate_window``).
    ValueError, naming the part, for anything else."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    kind: Kind
    if scheme in ("redis", "rediss", "unix"):
        kind = "redis"
    elif scheme in ("nats", "tls"):
        kind = "nats"
    else:
        raise ValueError(
            f"{hide_urls(url)!r}: a bus is a redis://... or nats://... URL, not {scheme or 'a path'}"
        )
    if kind == "nats" and parts.path not in ("", "/"):
        raise ValueError(f"{hide_urls(url)!r}: a nats:// URL has no path ({parts.path!r})")
    options: dict[str, str] = {}
    own: list[tuple[str, str]] = []  # the query items the client library reads (redis-py's)
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        if name in _OPTIONS[kind]:
            options[name] = value
        elif kind == "redis":
            own.append((name, value))
        else:
            known = ", ".join(_OPTIONS[kind])
            raise ValueError(f"{hide_urls(url)!r}: unknown option {name!r} (known: {known})")
    query = urllib.parse.urlencode(own)
    # The URL as written up to its query (urlunsplit would write unix:///x as unix:/x).
    bare = url.partition("#")[0].partition("?")[0] + (f"?{query}" if query else "")
    target = Target(kind, bare)
    prefix = options.get("prefix", target.prefix)
    if not (_KEY if kind == "redis" else _NAME).fullmatch(prefix):
        raise ValueError(f"{hide_urls(url)!r}: prefix {prefix!r} is no {kind} name")
    stream = options.get("stream", target.stream)
    if not _NAME.fullmatch(stream):
        raise ValueError(f"{hide_urls(url)!r}: stream {stream!r} is no JetStream name")
    return Target(
        kind,
        bare,
        prefix,
        stream,
        int(_number(url, "maxlen", options, MAXLEN, int)),
        _number(url, "duplicate_window", options, DUPLICATE_WINDOW, float),
    )


def _number(url: str, name: str, options: dict[str, str], default: float, kind: type) -> float:
    text = options.get(name)
    if text is None:
        return default
    try:
        value = kind(text)
    except ValueError:
        value = -1
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"{hide_urls(url)!r}: {name} must be a number >= 0, not {text!r}")
    return value  # type: ignore[no-any-return]


# ------------------------------------------------------------------------------ messages


class Message(msgspec.Struct, frozen=True, gc=False):
    """One change as it goes onto the bus."""

    seq: int
    table: str
    sport: str
    body: bytes
    committed_at: str


class _Row(msgspec.Struct, gc=False):
    """What a message needs of a change's row (the rest is skipped, not decoded)."""

    json: str | None = None
    sport: str | None = None


_row = msgspec.json.Decoder(_Row)


_SPORTS: dict[tuple[str, str | None], str] = {}  # (table, row's sport) -> subject token


def message(seq: int, op: str, table: str, key: str, row: str, committed_at: str) -> Message:
    """The message of one line of ``changes`` as stored (``key`` and ``row`` as their
    JSON texts): its body is :func:`change_json`, the line ``asyncsports changes`` prints."""
    got = _row.decode(row)
    body = change_json(seq, op, table, compact(key), got.json, committed_at)
    sport = _SPORTS.get((table, got.sport))
    if sport is None:
        if len(_SPORTS) > 1024:
            _SPORTS.clear()
        sport = _SPORTS[table, got.sport] = sport_of(table, got.sport)
    return Message(seq, table, sport, body, committed_at)


def change_json(
    seq: int, op: str, table: str, key: str, record: str | None, committed_at: str
) -> bytes:
    """A change as one line of JSON: ``seq``, ``op``, ``table``, ``key`` (its JSON, as
    :func:`compact` writes it), ``committed_at`` and ``record``, the record's JSON as
    stored (null for a row gone): the one form of a change that the bus carries and
    ``asyncsports changes`` prints."""
    if record is None:
        record = "null"
    elif "\n" in record or "\r" in record:  # stored as it came: keep a change one line
        record = msgspec.json.format(record, indent=0)
    # Formatted once as text and encoded once: a third cheaper than bytes % parts.
    return (
        f'{{"seq":{seq},"op":"{op}","table":"{table}","key":{key},'
        f'"committed_at":"{committed_at}","record":{record}}}'
    ).encode()


def compact(key: str) -> str:
    """A key's JSON as msgspec writes it: ``["a", "b"]`` (as the store keeps it) becomes
    ``["a","b"]``; one with nothing to change is returned as it is."""
    if ", " not in key and "\\" not in key and key.isascii():
        return key
    return msgspec.json.encode(msgspec.json.decode(key)).decode()


def sport_of(table: str, sport: str | None) -> str:
    """The sport token of a change's subject: the row's sport, or its table's
    (``streaming`` for events, ``snooker`` for snooker tournaments, else ``other``),
    as one NATS subject token."""
    name = sport or _SPORTLESS.get(table) or "other"
    return _TOKEN.sub("_", name.lower()) or "other"


def origin(first_committed_at: str) -> str:
    """The database's name on the bus: 16 hex digits of its first change's commit time."""
    return hashlib.sha256(f"asyncsports {first_committed_at}".encode()).hexdigest()[:16]


def entry_id(seq: int) -> str:
    """Redis: the entry id of change ``seq``."""
    return f"{seq}-0"


def seq_of_entry(entry: str | bytes) -> int:
    """Redis: the seq an entry id says (ValueError: not one of ours)."""
    text = entry.decode() if isinstance(entry, bytes) else entry
    ms, sep, n = text.partition("-")
    if not ms.isdigit() or (sep and not n.isdigit()):
        raise ValueError(f"not a stream entry id: {text!r}")
    return int(ms)


def msg_id(source: str, seq: int) -> str:
    """NATS: the ``Nats-Msg-Id`` of change ``seq`` of the database ``source``."""
    return f"{source}:{seq}"


def seq_of_msg_id(value: str) -> tuple[str, int]:
    """NATS: the ``(origin, seq)`` a message id says (ValueError: not one of ours)."""
    source, sep, seq = value.rpartition(":")
    if not sep or not source or not seq.isdigit():
        raise ValueError(f"not a message id of asyncsports: {value!r}")
    return source, int(seq)


# ---------------------------------------------------------------------------------- lag

LAG_BUCKETS: tuple[float, ...] = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
"""Upper bounds (seconds) of the lag histogram's buckets."""


@dataclass
class Lags:
    """A histogram of lags (seconds from a change's commit to its ack on the bus)."""

    bounds: Sequence[float] = LAG_BUCKETS
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    count: int = 0
    last: float | None = None

    def __post_init__(self) -> None:
        self.counts = [0] * (len(self.bounds) + 1)  # the last: above every bound

    def add(self, lag: float, n: int = 1) -> None:
        """Count ``n`` changes of lag ``lag``."""
        self.counts[bisect_left(self.bounds, lag)] += n
        self.total += lag * n
        self.count += n
        self.last = lag

    def cumulative(self) -> list[tuple[str, int]]:
        """``(le, count)`` pairs as Prometheus writes them, ``+Inf`` last."""
        out, running = [], 0
        for bound, n in zip([*map(str, self.bounds), "+Inf"], self.counts, strict=True):
            running += n
            out.append((bound, running))
        return out

    def quantile(self, q: float) -> float:
        """The upper bound of the bucket where quantile ``q`` falls (inf: above all)."""
        need, running = q * self.count, 0
        for bound, n in zip([*self.bounds, float("inf")], self.counts, strict=True):
            running += n
            if running >= need and running:
                return bound
        return 0.0
