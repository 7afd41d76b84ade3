"""Where every :class:`~asyncsports.errors.DecodeError` is built (pure: no I/O, no state).

A failure to decode arrives as msgspec's error (a ``ValidationError``, a syntax
``DecodeError``, or the ``UnicodeDecodeError`` and ``RecursionError`` it lets through) or
as a framing problem the stream decoder found itself. The functions here turn it into one
DecodeError holding all it needs at once: the target type, the JSON path, the byte offset,
a snippet and, from :class:`Source`, the response's status and url. Nobody sets fields on
a DecodeError after it is built.

- :func:`body_error`: a whole document (``models.decode``, action metadata).
- :func:`run_error`: a run of array elements (``jsonstream``), with the element's index.
- :func:`value_error`: a value outside the streamed array (a member of the envelope).
- :func:`error`: the constructor the others use, also for the framer's own findings.
"""

from __future__ import annotations

import re
import types
from typing import Any, NamedTuple, get_args, get_origin

import msgspec

from asyncsports._wire.json.scan import bad_utf8, deepest, spans
from asyncsports._wire.secrets import clip
from asyncsports.errors import DecodeError

__all__ = [
    "FAILURES",
    "Failure",
    "Source",
    "around",
    "body_error",
    "error",
    "key_path",
    "locate",
    "run_error",
    "split_message",
    "type_name",
    "value_error",
]

SNIPPET_MAX = 200

Failure = msgspec.DecodeError | UnicodeDecodeError | RecursionError
FAILURES = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)
"""What msgspec raises on bad input: its own errors, and two it does not wrap."""


class Source(NamedTuple):
    """The body an error is about: the target type's name, the response's url and status."""

    target: str = ""
    url: str = ""
    status: int | None = None


def error(
    src: Source,
    reason: str,
    *,
    path: str = "$",
    offset: int | None = None,
    snippet: str | bytes | bytearray = "",
) -> DecodeError:
    """A DecodeError about ``src`` (bytes in ``snippet`` are shown as text, clipped)."""
    if not isinstance(snippet, str):
        snippet = bytes(snippet).decode("utf-8", "replace")
    return DecodeError(
        reason,
        target=src.target,
        path=path,
        snippet=_clip(snippet),
        offset=offset,
        url=src.url,
        status=src.status,
    )


def around(buf: bytes | bytearray, at: int) -> bytes | bytearray:
    """The bytes of ``buf`` around index ``at``, for a snippet."""
    return buf[max(0, at - 40) : at + 60]


def type_name(tp: Any) -> str:
    """A short name for a type: ``list[Fixture]``, ``Data[list[Match] | Match]``."""
    if isinstance(tp, types.UnionType) or (get_origin(tp) is not None and get_args(tp)):
        args = get_args(tp)
        if isinstance(tp, types.UnionType) or str(get_origin(tp)) == "typing.Union":
            return " | ".join(type_name(a) for a in args)
        origin = get_origin(tp)
        return f"{getattr(origin, '__name__', repr(origin))}[{', '.join(map(type_name, args))}]"
    if tp is type(None):
        return "None"
    return str(getattr(tp, "__name__", repr(tp)))


def key_path(key: str | None) -> str:
    """The JSON path of the array: ``$`` for a bare one, else of member ``key``."""
    if key is None:
        return "$"
    if key.isidentifier():
        return f"$.{key}"
    return f"$[{msgspec.json.encode(key).decode()}]"


# --------------------------------------------------------------------------- syntax

_BYTE = re.compile(r" \(byte (\d+)\)$")


def _syntax(exc: Failure, text: bytes | bytearray) -> tuple[str, int | None]:
    """The reason and the index in ``text`` (None: msgspec does not say) of a syntax failure."""
    # msgspec before 0.23 lets a UnicodeDecodeError through; 0.23 and later raise
    # DecodeError("Invalid UTF-8 encoded string"), which says neither why nor where.
    if isinstance(exc, UnicodeDecodeError) or str(exc).startswith("Invalid UTF-8"):
        return f"invalid UTF-8: {utf8_reason(text, exc)}", bad_utf8(text)
    if isinstance(exc, RecursionError):
        depth, at = deepest(text)
        return f"JSON is nested too deeply ({depth} levels)", at
    message = str(exc)
    m = _BYTE.search(message)
    if m is None:
        return message, None
    return message[: m.start()], int(m.group(1))


def utf8_reason(text: bytes | bytearray, exc: Failure) -> str:
    """Why ``text`` is not UTF-8, as Python's decoder says it (``invalid start byte``)."""
    try:
        bytes(text).decode()
    except UnicodeDecodeError as bad:
        return bad.reason
    return exc.reason if isinstance(exc, UnicodeDecodeError) else str(exc)


# --------------------------------------------------------------------------- whole documents

_JSON_START = frozenset(b'{["-0123456789tfn')


def body_error(
    src: Source, exc: Failure, data: bytes, *, path: str = "$", lead: str = ""
) -> DecodeError:
    """The DecodeError for ``exc``, raised decoding the whole of ``data`` as ``src.target``.

    ``path`` is the JSON path of ``data`` within a larger document (``$`` for a whole body);
    ``lead`` goes before the reason. Runs only on the error path: it may decode ``data``
    again, untyped, to find the offending value.
    """
    stripped = data.lstrip()
    if not stripped:
        return error(src, lead + "empty body where JSON was expected", path=path)
    if stripped[0] not in _JSON_START:
        kind = "HTML" if stripped[:1] == b"<" else "text"
        # More than is shown: its URL secrets are hidden before the clip to SNIPPET_MAX.
        return error(src, f"{lead}expected JSON, got {kind}", path=path, snippet=stripped[:4096])
    if not isinstance(exc, msgspec.ValidationError):
        reason, at = _syntax(exc, data)
        offset = len(data) if at is None else at
        lo = max(0, offset - 80)
        return error(src, lead + reason, path=path, offset=offset, snippet=data[lo : offset + 80])
    reason, rel = split_message(str(exc))
    try:
        doc = msgspec.json.decode(data)
    except FAILURES:
        return error(src, lead + reason, path=path + rel[1:])
    rel, value = locate(doc, rel, reason)
    try:
        snippet = msgspec.json.encode(value)
    # msgspec encodes as deep as it decodes (checked on 0.18.6 and the newest): kept in case.
    except RecursionError:  # pragma: no cover  (the value decoded above, as deep as this)
        snippet = b""
    return error(src, lead + reason, path=path + rel[1:], snippet=snippet)


_AT_RE = re.compile(r" - at `(\$[^`]*)`")


def split_message(message: str) -> tuple[str, str]:
    """Split a msgspec error message into its reason and the JSON path (``$`` when none).

    Nested decodes (a hook that converted a sub-document) give several ``- at`` parts, the
    outermost last; they are joined into one path.
    """
    parts = _AT_RE.split(message)
    reason, paths = parts[0], parts[1::2]
    if not paths:
        return reason, "$"
    path = paths[-1]
    for inner in reversed(paths[:-1]):
        path += inner[1:]
    return reason, path


_SEG_RE = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_GOT_RE = re.compile(r"got `(\w+)`")
_JSON_KIND = {
    dict: "object",
    list: "array",
    str: "str",
    bool: "bool",
    int: "int",
    float: "float",
    type(None): "null",
}
_KINDS = frozenset(_JSON_KIND.values())
_Segs = list[tuple[str | None, str | None, str]]


def locate(doc: Any, path: str, reason: str = "") -> tuple[str, Any]:
    """Walk ``path`` (msgspec's form) in the untyped ``doc``; return the path and the value found.

    msgspec writes a dict key as ``[...]``: the key is chosen among those whose value the rest
    of the path reaches (and whose JSON kind matches ``got `kind``` in ``reason``), and named in
    the returned path; when that leaves not exactly one, the walk stops at the dict and the
    rest of the path is kept as msgspec wrote it.
    """
    segs: _Segs = [(m.group(1), m.group(2), m.group(0)) for m in _SEG_RE.finditer(path)]
    got = _GOT_RE.search(reason)
    want = got.group(1) if got else None
    node, walked = doc, "$"
    for i, (name, index, text) in enumerate(segs):
        if index == "..." and isinstance(node, dict):
            keys = [k for k, v in node.items() if _reaches(v, segs[i + 1 :], want)]
            if len(keys) > 1 and i + 1 == len(segs):  # a hook's message may quote the value
                keys = [k for k in keys if isinstance(node[k], str) and repr(node[k]) in reason]
            if len(keys) != 1:
                return walked + "".join(s[2] for s in segs[i:]), node
            node, walked = node[keys[0]], f"{walked}[{msgspec.json.encode(keys[0]).decode()}]"
            continue
        child = _step(node, name, index)
        if child is _MISSING:
            return walked + "".join(s[2] for s in segs[i:]), node
        node, walked = child, walked + text
    return walked, node


_MISSING = object()


def _step(node: Any, name: str | None, index: str | None) -> Any:
    """``node``'s member ``name`` or item ``index``; _MISSING if it has none."""
    if name is not None and isinstance(node, dict) and name in node:
        return node[name]
    if index is not None and index != "..." and isinstance(node, list) and int(index) < len(node):
        return node[int(index)]
    return _MISSING


def _reaches(node: Any, segs: _Segs, want: str | None) -> bool:
    for i, (name, index, _) in enumerate(segs):
        if index == "..." and isinstance(node, dict):
            return any(_reaches(v, segs[i + 1 :], want) for v in node.values())
        node = _step(node, name, index)
        if node is _MISSING:
            return False
    return want is None or want not in _KINDS or _JSON_KIND.get(type(node)) == want


def _clip(text: str) -> str:
    # The secrets policy's clip: URL secrets hidden before the cut, the cut marked so
    # that the session's scrub hides the head of a token cut there.
    return clip(text, SNIPPET_MAX)


# --------------------------------------------------------------------------- streamed parts


def run_error(
    src: Source,
    exc: Failure,
    run: bytes,
    *,
    offset: int,
    path: str,
    index: int,
    single: bool = False,
    shift: int = 0,
    delta: int = 0,
) -> DecodeError:
    """The DecodeError for ``exc``, raised decoding (part of) a run ``[e1,e2,...]``.

    ``offset`` is the body offset of ``run[1]``, ``path`` that of the array, ``index`` the
    array index of the run's first element (``single``: the run holds the one value at
    ``path``, not elements). The decoded text was ``b"[" + run[delta + 1:]``, whose element
    ``i`` is the run's element ``shift + i``.
    """
    elements = spans(run)
    if isinstance(exc, msgspec.ValidationError):
        reason, rel = split_message(str(exc))
        m = re.match(r"\$\[(\d+)\]", rel)
        if m is None:
            return error(src, reason, path=path, offset=offset, snippet=run[1:-1])
        j = min(shift + int(m.group(1)), len(elements) - 1)
        s, e = elements[j]
        where = path + rel[m.end() :] if single else f"{path}[{index + j}]{rel[m.end() :]}"
        return error(src, reason, path=where, offset=offset - 1 + s, snippet=run[s:e])
    text = b"[" + run[delta + 1 :] if delta else run
    reason, at = _syntax(exc, text)
    at = min(len(run) - 1 if at is None else at + delta, len(run) - 1)
    j = max(k for k, (s, _) in enumerate(elements) if s <= at or k == 0)
    where = path if single else f"{path}[{index + j}]"
    lo = max(elements[j][0], at - 60)
    return error(
        src, reason, path=where, offset=offset - 1 + at, snippet=run[lo : lo + SNIPPET_MAX]
    )


def value_error(
    src: Source, exc: Failure, buf: bytes | bytearray, start: int, end: int, base: int
) -> DecodeError:
    """The DecodeError for ``exc``, raised decoding the value ``buf[start:end]`` untyped.

    ``base`` is the body offset of ``buf[0]``. A value msgspec calls truncated is whole
    here (the envelope scanner found its end), so it is wrong: ``tru``.
    """
    reason, at = _syntax(exc, buf[start:end])
    if at is None:
        reason, at = "JSON is malformed: invalid value", 0
    return error(src, reason, offset=base + start + at, snippet=around(buf, start + at))
