"""The envelope lets go of the members it has parsed once they pass 64 KiB, so they do not
count against ``max_element`` (the part held is what is not parsed yet)."""

from __future__ import annotations

import pytest

from asyncsports.errors import BodyTooLargeError, DecodeError
from asyncsports.jsonstream import ArrayFramer


def member(size: int) -> bytes:
    """The body's start up to a member's comma, ``size`` bytes long."""
    return b'{"x":"' + b"a" * (size - 8) + b'",'


def test_parsed_members_past_64_kib_are_let_go() -> None:
    framer = ArrayFramer("data", max_element=65536)
    assert len(member(65537)) == 65537
    assert framer.feed(member(65537)) is None
    assert framer.feed(b'"data":[1,2]}') == b"[1]"
    assert framer.close() == b"[2]"


def test_parsed_members_up_to_64_kib_are_held() -> None:
    framer = ArrayFramer("data", max_element=65535)
    with pytest.raises(BodyTooLargeError):
        framer.feed(member(65536))


def test_offsets_count_the_members_let_go() -> None:
    framer = ArrayFramer("data")
    first = member(70000)
    second = b'"y":"' + b"b" * 69994 + b'",'
    assert framer.feed(first) is None
    assert framer.feed(second) is None
    with pytest.raises(DecodeError) as info:
        framer.feed(b'"data":5}')
    assert info.value.offset == len(first) + len(second) + 7
