"""The fast path's edges: a two-byte head split across chunks, an empty element right
after a cut, and a stretch past the bound with no head (the exact scanner takes over)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from unittest import mock

import msgspec
import pytest

from asyncsports._wire.json import array as framing
from asyncsports.errors import DecodeError
from asyncsports.jsonstream import ArrayFramer


@contextmanager
def small_limit() -> Iterator[None]:
    with mock.patch.object(framing, "_LIMIT", 8):
        yield


def test_a_two_byte_head_split_across_chunks() -> None:
    framer = ArrayFramer()
    assert framer.feed(b'["a","b","c"') == b'["a","b"]'
    assert framer.head == b',"'
    assert framer.feed(b",") is None
    assert framer.feed(b'"d"') == b'["c"]'
    assert framer.feed(b"]") is None
    assert framer.close() == b'["d"]'


def test_an_empty_element_right_after_a_cut_fails_that_feed() -> None:
    framer = ArrayFramer()
    assert framer.feed(b"[1,2,") == b"[1,2]"
    with pytest.raises(DecodeError) as info:
        framer.feed(b",3]")
    assert (info.value.reason, info.value.offset) == (
        "JSON is malformed: expected a value before ','",
        5,
    )


def test_a_stretch_with_no_head_is_framed_exactly_at_once() -> None:
    with small_limit():
        framer = ArrayFramer()
        assert framer.feed(b'[{"k":1},{"k":2},{"k":3') == b'[{"k":1},{"k":2}]'
        assert framer.head == b',{"k":'
        # Past the bound with no head: the exact scan cuts at the last comma now.
        assert framer.feed(b"},[1],[2],[3]") == b'[{"k":3},[1],[2]]'
        assert framer.feed(b"]") is None
        assert framer.close() == b"[[3]]"


def test_an_element_longer_than_the_bound() -> None:
    # No comma in the stretch: the bound doubles, and the element still comes out whole.
    long = b',{"k":2,"v":"' + b"a" * 40 + b'"}'
    with small_limit():
        framer = ArrayFramer()
        assert framer.feed(b'[{"k":1},{"k":0}') == b'[{"k":1}]'
        assert framer.head == b',{"k":'
        runs = [framer.feed(long[i : i + 10]) for i in range(0, len(long), 10)]
        # Back on the fast path: a stretch with no head is measured against the new bound.
        runs += [framer.feed(b',{"k":3}'), framer.feed(b",[1]"), framer.feed(b"]")]
        runs.append(framer.close())
    got = [x for r in runs if r is not None for x in msgspec.json.decode(r)]
    assert got == [{"k": 0}, {"k": 2, "v": "a" * 40}, {"k": 3}, [1]]


def test_no_run_is_a_guess_before_the_first_cut() -> None:
    framer = ArrayFramer()
    assert framer.feed(b"[1") is None
    assert not framer.guessed
    with pytest.raises(RuntimeError):
        framer.retract()


def test_whitespace_pieces_before_an_empty_element() -> None:
    framer = ArrayFramer()
    assert framer.feed(b"[1,2,3") == b"[1,2]"
    assert framer.feed(b",") == b"[3]"
    assert framer.feed(b" ") is None
    assert framer.feed(b" ") is None
    with pytest.raises(DecodeError) as info:
        framer.feed(b",4]")
    assert info.value.offset == 9


def test_a_retracted_guess_with_nothing_behind_it_is_no_guess() -> None:
    framer = ArrayFramer(verify=False)
    assert framer.feed(b'[{"k":0},{"k":0') == b'[{"k":0}]'
    run = framer.feed(b',"c":[0,{"k":1}]')  # the head is only inside this element
    assert run is not None and framer.guessed
    assert framer.retract() is None
    assert not framer.guessed
    with pytest.raises(RuntimeError):
        framer.retract()
