"""The framer's bound on what it holds: refused with a message that says which part
(an element, or the envelope around the array), where, the limit and the URL."""

from __future__ import annotations

import pytest

from asyncsports.errors import BodyTooLargeError
from asyncsports.jsonstream import ArrayFramer


@pytest.mark.parametrize(
    ("key", "chunk", "what"),
    [
        (None, b'[{"a":"' + b"x" * 50, "an element of the array at $"),
        ("data", b'{"meta":"' + b"x" * 50, "the body around the array at $.data"),
    ],
)
def test_a_part_past_the_limit_is_named(key: str | None, chunk: bytes, what: str) -> None:
    framer = ArrayFramer(key, url="http://h/x", max_element=20)
    with pytest.raises(BodyTooLargeError) as raised:
        framer.feed(chunk)
    assert str(raised.value) == f"{what} holds more than max_element_size=20 bytes (GET http://h/x)"
    assert (raised.value.limit, raised.value.url) == (20, "http://h/x")


def test_a_part_at_the_limit_is_held() -> None:
    framer = ArrayFramer(max_element=20)
    assert framer.feed(b'[{"a":"' + b"x" * 14) is None
    assert framer.buffered == 20
