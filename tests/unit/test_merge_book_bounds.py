"""The merge book's defaults, refusals and removal, record by record."""

from __future__ import annotations

from typing import cast

import pytest

from asyncsports._wire.live.merge import MergeBook
from asyncsports._wire.live.messages import Record


def records(n: int, tag: str) -> tuple[Record, ...]:
    # The book never looks inside a record: distinct objects are enough.
    return tuple(cast(Record, f"{tag}{i}") for i in range(n))


def test_the_default_share_is_64_records_a_feed() -> None:
    assert MergeBook[str]().per_feed == 64


def test_a_share_under_one_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"^per_feed: must be >= 1, got 0$"):
        MergeBook[str](0)


def test_a_feed_is_added_once() -> None:
    book = MergeBook[str]()
    book.add("a")
    with pytest.raises(ValueError, match=r"^feed 'a' is merged already$"):
        book.add("a")


def test_pushing_nothing_never_pauses() -> None:
    book = MergeBook[str](1)
    book.add("a")
    assert book.push("a", ()) is False
    assert book.push("a", records(1, "a")) is True


def test_removing_a_feed_drops_its_records_and_keeps_the_others() -> None:
    book = MergeBook[str](2)
    book.add("a")
    book.add("b")
    a, b = records(2, "a"), records(1, "b")
    book.push("a", a[:1])
    book.push("b", b)
    assert book.push("a", a[1:]) is True and book.paused("a")
    assert book.remove("a") == list(a)
    assert book.pop() == ("b", b[0])
    assert book.pop() is None
    # Added again, the feed starts afresh: not paused, nothing buffered.
    book.add("a")
    assert not book.paused("a") and book.buffered("a") == 0
    assert book.resumable() == ()
