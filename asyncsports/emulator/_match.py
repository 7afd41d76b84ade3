"""What a replay (:mod:`._replay`) sends, sans I/O: the recorded key nearest a request the
recording lacks (:class:`Nearest`), and what a live connection at a ``startPosition`` is
sent (:func:`schedule`)."""

from __future__ import annotations

import bisect
import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from asyncsports._wire.recording.feeds import RecordedFeed

__all__ = ["Nearest", "Script", "schedule"]

_SEQ = re.compile(r'("fixtureSeqNum"\s*:\s*"?)(-?\d+)')


class Nearest:
    """Recorded keys sorted by host and by host and path, for naming the nearest to a
    request not in the recording without a look at every key.

    The candidates are those of the same path (else of the same host) next to the target
    in sorted order, :data:`NEIGHBOURS` either side, which share the longest prefixes with
    it; the one most like it by text wins, compared on their first :data:`COMPARED`
    characters. So a miss costs a binary search and at most 64 comparisons of short
    strings, however large the recording.
    """

    NEIGHBOURS = 32
    COMPARED = 512

    __slots__ = ("_by_host", "_by_path")

    def __init__(self, keys: Iterable[str]) -> None:
        self._by_host: dict[str, list[str]] = {}
        self._by_path: dict[str, list[str]] = {}
        for k in keys:
            self._by_host.setdefault(k.partition(" ")[0], []).append(k)
            self._by_path.setdefault(k.partition("?")[0], []).append(k)
        for pool in (*self._by_host.values(), *self._by_path.values()):
            pool.sort()

    def find(self, target: str) -> str | None:
        """The recorded key most like ``target``: of its path if any, else of its host."""
        pool = self._by_path.get(target.partition("?")[0]) or self._by_host.get(
            target.partition(" ")[0]
        )
        if not pool:
            return None
        at = bisect.bisect_left(pool, target)
        near = pool[max(0, at - self.NEIGHBOURS) : at + self.NEIGHBOURS]
        head = target[: self.COMPARED]
        matcher = difflib.SequenceMatcher(None, b=head)  # b's index is built once

        def likeness(k: str) -> float:
            matcher.set_seq1(k[: self.COMPARED])
            return matcher.ratio()

        return max(near, key=likeness)


@dataclass(frozen=True, slots=True)
class Script:
    """What one replayed connection is sent: ``messages`` (seconds after the first, text),
    then, ``at`` seconds after the first, the end: a close ``code``,
    :data:`~asyncsports._wire.recording.feeds.CUT` (no close frame) or None (left open: the
    recorded service ended no connection there)."""

    messages: list[tuple[float, str]]
    code: int | None = None
    at: float = 0.0


def schedule(feed: RecordedFeed, start: int) -> Script:
    """What a connection at ``startPosition`` ``start`` is sent: the records from index
    ``start`` on, numbered as the recorded service numbered them (from 1 on the connection,
    or ``index + 1`` when it went on numbering; rewritten only where the recording numbered
    them otherwise), up to the first recorded end past ``start``, and that end."""
    length = feed.length
    end_at = min((p for p in feed.ends if p > start), default=None)
    if end_at is None and start >= length:
        # Nothing to send: the service's end at or past the timeline's end, if recorded.
        end_at = max((p for p in feed.ends if length <= p <= start), default=None)
    restart = feed.numbering != "continue"
    out: list[tuple[float, str]] = []
    t0: float | None = None
    t = 0.0
    for e in feed.entries:
        if e.after < start:
            continue
        if end_at is not None and e.after >= end_at:
            break
        text = e.text
        if e.index is not None and e.seq is not None:
            want = e.index - start + 1 if restart else e.index + 1
            if e.seq != want:
                text = _SEQ.sub(rf"\g<1>{want}", text, count=1)
        t0 = e.t if t0 is None else t0
        t = e.t
        out.append((e.t - t0, text))
    if end_at is None:
        return Script(out)
    end = feed.ends[end_at]
    at = max(end.t, t) - t0 if t0 is not None else 0.0
    return Script(out, end.code, at)
