"""A keyed body cut short after its array is refused, also when the array's end was found
only at the end of input (the fast path does not look for it)."""

from __future__ import annotations

import pytest

from asyncsports.errors import DecodeError
from asyncsports.jsonstream import ArrayFramer


@pytest.mark.parametrize("tail", [b"", b',"x":'])
@pytest.mark.parametrize("size", [1, 5, 64])
def test_cut_short_after_the_array(tail: bytes, size: int) -> None:
    body = b'{"data":[{"k":1},{"k":2},{"k":3}]' + tail
    framer = ArrayFramer("data")
    with pytest.raises(DecodeError) as info:
        for i in range(0, len(body), size):
            framer.feed(body[i : i + size])
        framer.close()
    err = info.value
    assert (err.reason, err.path, err.offset, err.snippet) == (
        "JSON is truncated",
        "$.data",
        len(body),
        tail.decode(),
    )


def test_the_fast_path_was_taken() -> None:
    # (what makes the case above reach the end of input inside the array)
    framer = ArrayFramer("data")
    framer.feed(b'{"data":[{"k":1},{"k":2},{"k":3}]')
    assert framer.head == b',{"k":'
