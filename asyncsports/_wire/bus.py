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
  the stream's duplicate window drops a second publish);
- ``https://host/path`` (``http://`` to a loopback host only): each message POSTed to
  the endpoint as a Standard Webhooks request (:mod:`asyncsports._wire.webhooks`), its
  ``webhook-id`` ``<origin>:<seq>``; the endpoint cannot say where the feed stands, so
  the mirror database keeps it (a cursor named for the endpoint).

The ``origin`` names the database: a digest of its first change's commit time, which a
copy keeps and another database does not share (:func:`origin`).
"""

from __future__ import annotations

import difflib
import hashlib
import re
import urllib.parse
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import msgspec

from asyncsports._wire.secrets import (
    hide_url,
    hide_urls,
    is_credential,
    normalize_userinfo,
    split_userinfo,
)

__all__ = [
    "ACK_TIMEOUT",
    "LAG_BUCKETS",
    "PROBE",
    "Lags",
    "Message",
    "Target",
    "Trouble",
    "bus_options",
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
    "who_answered",
]

Kind = Literal["redis", "nats", "webhook"]

Trouble = Literal["away", "refused"]
"""What an error of a bus says: it is ``away`` for now (wait, then connect again), or it
``refused`` what was asked (credentials, a request it will not take): no use waiting."""

MAXLEN = 1_000_000
"""Entries a Redis stream is trimmed to (about: ``MAXLEN ~``) unless the URL says."""

ACK_TIMEOUT = 10.0
"""Seconds a batch may wait for the bus's acks before the connection counts as lost."""

CONCURRENCY = 64
"""The most requests a webhook sender keeps in flight (``?concurrency=``)."""

DUPLICATE_WINDOW = 120.0
"""Seconds JetStream remembers a message id (a stream the publisher creates)."""

# Sports of the tables whose rows name none: the live stream events and snooker's.
_SPORTLESS = {"events": "streaming", "snooker_tournaments": "snooker"}
_TOKEN = re.compile(r"[^A-Za-z0-9_-]")  # what a NATS subject token may not hold, and more
_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_KEY = re.compile(r"[^\s*>]{1,200}")

# The longest time a bus URL option may say (seconds): a socket timeout, JetStream's
# duplicate window (it holds each id that long: a window of days is memory, not safety).
_DAY = 86400

_INT31, _INT63 = 2**31 - 1, 2**63 - 1
_REDIS = ("redis", "rediss", "unix")
_WEBHOOK = ("http", "https")
# Hosts plain http:// may reach: this machine's own (what goes over the wire is the feed
# itself, in clear, and a signature that anyone on the path could replay once).
_LOOPBACK = re.compile(r"localhost|127(?:\.[0-9]{1,3}){3}|::1|0:0:0:0:0:0:0:1")
_TRUE, _FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


@dataclass(frozen=True)
class _Option:
    """What a bus URL option takes: a ``whole`` number or ``seconds`` from ``low`` to
    ``high``, a ``flag``, one of ``choices``, a ``name`` (printable ASCII) or ``text``;
    and under which URL schemes."""

    form: Literal["whole", "seconds", "flag", "name", "text"]
    low: float = 0
    high: float = 0
    schemes: tuple[str, ...] = _REDIS
    choices: tuple[str, ...] = ()


# Our own options, taken off the URL.
_OPTIONS: dict[Kind, dict[str, _Option]] = {
    "redis": {"prefix": _Option("text"), "maxlen": _Option("whole", 0, _INT63)},
    "nats": {
        "prefix": _Option("text"),
        "stream": _Option("text"),
        "duplicate_window": _Option("seconds", 0.1, _DAY),  # JetStream takes no less
    },
    "webhook": {
        "concurrency": _Option("whole", 1, CONCURRENCY),
        "timeout": _Option("seconds", 0.1, 3600),
    },
}

# redis-py's, left on the URL for it: those that redis-py 5.0.1 and 8.x both read from
# the query (URL_QUERY_ARGUMENT_PARSERS) or pass to the connection as they are, under the
# schemes whose connection takes them (a Unix socket no keepalive, only TLS any ssl_*).
# Anything else it would pass on to the connection's constructor: a TypeError at connect.
_REDIS_PY: dict[str, _Option] = {
    "db": _Option("whole", 0, _INT31),
    "socket_timeout": _Option("seconds", 0.001, _DAY),
    "socket_connect_timeout": _Option("seconds", 0.001, _DAY),
    "socket_keepalive": _Option("flag", schemes=("redis", "rediss")),
    "retry_on_timeout": _Option("flag"),
    "max_connections": _Option("whole", 1, _INT31),
    "health_check_interval": _Option("whole", 0, _DAY),
    "username": _Option("text"),
    "password": _Option("text"),
    "client_name": _Option("name"),
    "ssl_check_hostname": _Option("flag", schemes=("rediss",)),
    "ssl_cert_reqs": _Option("name", schemes=("rediss",), choices=("none", "optional", "required")),
    "ssl_ca_certs": _Option("text", schemes=("rediss",)),
    "ssl_certfile": _Option("text", schemes=("rediss",)),
    "ssl_keyfile": _Option("text", schemes=("rediss",)),
}

_WHOLE = re.compile(r"[0-9]{1,20}")
_DECIMAL = re.compile(r"(?:[0-9]{1,20}(?:\.[0-9]{0,20})?|\.[0-9]{1,20})(?:[eE][+-]?[0-9]{1,4})?")
_PRINTABLE = re.compile(r"[!-~]{1,200}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_HOST = re.compile(r"[\w.:%-]*")  # a name, an address (IPv6 unbracketed), or none: unix://


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
    concurrency: int = 1
    """Webhook: requests in flight at most (each table's changes still one at a time)."""
    timeout: float = ACK_TIMEOUT
    """Webhook: seconds a request may take, from connecting to the answer's end."""

    @property
    def shown(self) -> str:
        """The target for messages and the lease's name: its URL without userinfo (the
        secrets policy's rule: up to the last ``@``, whatever the password holds), query
        or fragment."""
        where = split_userinfo(self.url)[0].partition("?")[0].partition("#")[0]
        if self.kind == "redis":
            return f"{hide_urls(where)} {self.prefix}:*"
        if self.kind == "webhook":
            return hide_urls(where)
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
    ``prefix``, ``maxlen`` and redis-py's own, :func:`bus_options`; NATS: ``prefix``,
    ``stream``, ``duplicate_window``), or a webhook endpoint ``https://`` (``http://``
    to a loopback host: ``concurrency``, ``timeout``). ValueError, naming the part, for anything else: an
    unknown option (with the known ones, and the likeliest meant), a value out of range,
    an option given twice; so nothing the bus's client reads later can fail on it."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    kind: Kind
    if scheme in _REDIS:
        kind = "redis"
    elif scheme in ("nats", "tls"):
        kind = "nats"
    elif scheme in _WEBHOOK:
        kind = "webhook"
    else:
        raise ValueError(
            f"{hide_url(url)!r}: a bus is a redis://..., nats://... or https://... URL, "
            f"not {scheme or 'a path'}"
        )
    written = url, parts
    if kind == "redis":
        # A password written unencoded (``redis://:my/Secret@host``) read as the secrets
        # rule reads it, up to the last @, rather than as redis-py's urlsplit would.
        url = normalize_userinfo(url)
        parts = urllib.parse.urlsplit(url)
    _check_url(url, parts, kind, scheme)
    _check_last_at(*written)
    options, own = _query(url, parts.query, kind, scheme)
    query = urllib.parse.urlencode(own)
    # The URL as written up to its query (urlunsplit would write unix:///x as unix:/x).
    bare = url.partition("?")[0] + (f"?{query}" if query else "")
    target = Target(kind, bare)
    prefix = str(options.get("prefix", target.prefix))
    if not (_KEY if kind == "redis" else _NAME).fullmatch(prefix):
        raise ValueError(f"{hide_url(url)!r}: prefix {_clip(prefix)!r} is no {kind} name")
    stream = str(options.get("stream", target.stream))
    if not _NAME.fullmatch(stream):
        raise ValueError(f"{hide_url(url)!r}: stream {_clip(stream)!r} is no JetStream name")
    return Target(
        kind,
        bare,
        prefix,
        stream,
        int(options.get("maxlen", MAXLEN)),
        float(options.get("duplicate_window", DUPLICATE_WINDOW)),
        int(options.get("concurrency", 1)),
        float(options.get("timeout", ACK_TIMEOUT)),
    )


def _check_last_at(url: str, parts: urllib.parse.SplitResult) -> None:
    """ValueError for a URL that reads as a bus two ways: its last '@' (where the secrets
    rule ends a password written unencoded) lies past the authority as urlsplit reads it
    (in its path or query), and that authority is a host too. ``redis://h:1/0?client_name=
    me@x`` would reach host "x" with a password of "1/0?client_name=me"; written
    ``redis://:my/Secret@h``, the first reading (host "", port "my") is none."""
    at = url.rfind("@")
    if at < url.find("//") + 2 + len(parts.netloc):
        return  # no '@', or within the authority: one reading
    try:
        host = parts.hostname
        _ = parts.port  # read for its check: the first reading has no port
    except ValueError:
        return
    if host and _HOST.fullmatch(host):
        # The host is not quoted: by the other reading it is a piece of the password.
        raise ValueError(
            f"{hide_url(url)!r}: reads two ways, as its last '@' ends a password and the "
            "'/' or '?' before it ends the host: write an '@' of a path or query as %40, "
            "a '/' or '?' of a password as %2F or %3F"
        )


def _check_url(url: str, parts: urllib.parse.SplitResult, kind: Kind, scheme: str) -> None:
    """ValueError for what the clients would read otherwise than it is written, or fail on."""
    try:
        url.encode()
    except UnicodeEncodeError:
        raise ValueError(f"{hide_url(url)!r}: not UTF-8 text") from None
    if _CONTROL.search(url) or url != url.strip():
        # urlsplit drops tabs and newlines, and spaces at either end: what is read would
        # not be what is written.
        raise ValueError(f"{hide_url(url)!r}: a control character, or space at an end")
    if "#" in url:  # all after it would be dropped: "redis://:pa#ss@host" is localhost
        raise ValueError(f"{hide_url(url)!r}: a '#' (in a password or a value: %23)")
    _, user, password = split_userinfo(url)
    if kind == "nats" and "/" in f"{user}{password}":
        # nats-py ends the host at the first "/", so the rest of the URL (path, host,
        # port) would come from the secret: each would be named in what is said of it.
        raise ValueError(
            f"{hide_url(url)!r}: a '/' in the userinfo (a token or password), which "
            "nats-py reads as the end of the host"
        )
    try:
        _ = parts.port  # read for its check: out of range, or not a number
    except ValueError as exc:
        raise ValueError(f"{hide_url(url)!r}: bad port ({exc})") from None
    host = parts.hostname or ""
    if not host and scheme != "unix":
        # Both clients would take localhost: a URL whose host went into a password (up to
        # its last "@") would reach another server than the one meant.
        raise ValueError(f"{hide_url(url)!r} names no host (after the last '@', if any)")
    if not _HOST.fullmatch(host):
        # Read as written: the last "@" ends a password, and what follows was no host.
        # Quoted as written too: urlsplit's is (partly) lowercased, which a scrubber of the
        # userinfo's pieces (a reader that split it elsewhere) would not match.
        at = url.lower().find(host.lower())  # it is there: urlsplit took it from url
        written = url[at : at + len(host)]
        raise ValueError(f"{hide_url(url)!r}: {_clip(written)!r} is no host name")
    if kind == "webhook":
        if scheme == "http" and not _LOOPBACK.fullmatch(host.lower()):
            raise ValueError(
                f"{hide_url(url)!r}: plain http:// only to this machine (localhost, "
                "127.x.x.x, ::1): the changes and their signatures would cross the "
                "network in clear; use https://"
            )
        return
    if kind == "nats" and parts.path not in ("", "/"):
        raise ValueError(f"{hide_url(url)!r}: a nats:// URL has no path ({parts.path!r})")
    if scheme != "unix" and parts.path.strip("/"):  # redis-py reads a number there as db
        _value(url, "db", parts.path.strip("/"), _REDIS_PY["db"])


def _query(
    url: str, query: str, kind: Kind, scheme: str
) -> tuple[dict[str, str | int | float], list[tuple[str, str]]]:
    """Our options of the query, checked, and redis-py's, checked, to pass on to it."""
    options: dict[str, str | int | float] = {}
    own: list[tuple[str, str]] = []  # the query items the client library reads (redis-py's)
    ours, theirs = _OPTIONS[kind], _REDIS_PY if kind == "redis" else {}
    for name, text in urllib.parse.parse_qsl(query, keep_blank_values=True):
        option = ours.get(name) or theirs.get(name)
        if option is None:
            raise ValueError(f"{hide_url(url)!r}: {_unknown(name, scheme)}")
        if scheme not in option.schemes and kind == "redis":
            where = ", ".join(f"{s}://" for s in option.schemes)
            known = ", ".join(bus_options(scheme))
            raise ValueError(
                f"{hide_url(url)!r}: option {name!r} is not for {scheme}:// (only {where}; "
                f"known: {known})"
            )
        if name in options or any(name == n for n, _ in own):
            raise ValueError(f"{hide_url(url)!r}: option {name!r} given twice")
        value = _value(url, name, text, option)
        if name in ours:
            options[name] = value
        else:  # a number as written, checked; a flag or a choice as every redis-py reads it
            own.append((name, text if option.form in ("whole", "seconds") else str(value)))
    return options, own


def bus_options(scheme: str) -> list[str]:
    """The query options a bus URL of ``scheme`` (``redis``, ``rediss``, ``unix``,
    ``nats``, ``tls``, ``http``, ``https``) takes: ours, then (Redis) redis-py's own."""
    if scheme in _WEBHOOK:
        return list(_OPTIONS["webhook"])
    if scheme not in _REDIS:
        return list(_OPTIONS["nats"])
    return [*_OPTIONS["redis"], *(n for n, o in _REDIS_PY.items() if scheme in o.schemes)]


def _unknown(name: str, scheme: str) -> str:
    known = bus_options(scheme)
    meant = difflib.get_close_matches(name.lower(), known, n=1, cutoff=0.6)
    hint = f"did you mean {meant[0]!r}?; " if meant else ""
    return f"unknown option {_clip(name)!r} ({hint}known: {', '.join(known)})"


def _value(url: str, name: str, text: str, option: _Option) -> str | int | float:
    """The value ``text`` of option ``name``, checked (ValueError: saying what it takes):
    a number as an ``int`` or ``float``, a flag as ``1`` or ``0``, else the text."""
    if option.choices:
        if text.lower() in option.choices:
            return text.lower()
        takes = f"one of {', '.join(option.choices)}"
    elif option.form == "flag":
        if text.lower() in _TRUE + _FALSE:
            return 1 if text.lower() in _TRUE else 0
        takes = f"one of {', '.join(_TRUE)} or {', '.join(_FALSE)}"
    elif option.form in ("whole", "seconds"):
        return _number(url, name, text, option)
    elif option.form == "name" and not _PRINTABLE.fullmatch(text):
        takes = "1 to 200 printable ASCII characters, no spaces"
    elif option.form == "text" and name in _REDIS_PY and "%" in text:
        # redis-py 5 unquotes a query value once more than 8 does: the two would differ.
        raise ValueError(
            f"{hide_url(url)!r}: {name}: a '%' in a redis-py option's value is read one way "
            "by redis-py 5 and another by 8; give it another way (a password in the URL: "
            "redis://:PASSWORD@host)"
        )
    elif option.form == "text" and name in _REDIS_PY and not text:
        takes = "a value"
    else:
        return text
    if is_credential(name):
        raise ValueError(f"{hide_url(url)!r}: {name} must be {takes}")
    raise ValueError(f"{hide_url(url)!r}: {name} must be {takes}, not {_clip(text)!r}")


def _number(url: str, name: str, text: str, option: _Option) -> int | float:
    """``text`` as a whole number or seconds within the option's range (ASCII digits,
    a decimal point and exponent for seconds: what Python's int and float read and more
    (``1_0``, ``٣``, `` 1``, ``nan``) is refused, lest a client read it another way)."""
    whole = option.form == "whole"
    value: int | float | None = None
    if (_WHOLE if whole else _DECIMAL).fullmatch(text):
        value = int(text) if whole else float(text)
    if value is None or not option.low <= value <= option.high:
        span = (
            f"{int(option.low)} to {int(option.high)}"
            if whole
            else f"{option.low:g} to {option.high:g} (seconds)"
        )
        raise ValueError(
            f"{hide_url(url)!r}: {name} must be a number from {span}, not {_clip(text)!r}"
        )
    return value


def _clip(text: str, most: int = 40) -> str:
    """A value or name as an error quotes it: at most ``most`` characters."""
    return text if len(text) <= most else text[:most] + "..."


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


# ------------------------------------------------------------------- another server

PROBE = b"PING\r\n"
"""What is sent to a server at a bus's address that says nothing of itself: a Redis
answers ``+PONG``, an HTTP server ``HTTP/1.1 400``, a NATS server (which would have sent
its INFO first) ``PONG``."""


def who_answered(said: bytes) -> str:
    """Who answered at a bus's address, from the first line it said (unasked, or to
    :data:`PROBE`): a NATS server's INFO, a Redis reply, an HTTP status line, or that
    line itself (cut short, as bytes: nothing of it is run through a terminal)."""
    line = said.split(b"\n", 1)[0].rstrip(b"\r")
    if line.startswith(b"INFO {"):
        try:
            version = str(msgspec.json.decode(line[5:])["version"])
        except (msgspec.DecodeError, TypeError, KeyError):
            return "a NATS server answered (INFO)"
        return f"a NATS server answered (INFO, version {_clip(version, 20)})"
    text = line[:60].decode("ascii", "backslashreplace")
    if line[:1] in (b"+", b"-"):  # RESP's simple string and error
        return f"a Redis server answered ({text})"
    if line.startswith(b"HTTP/"):
        return f"an HTTP server answered ({text})"
    return f"something else answered: {_clip(repr(line), 60)}"


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
