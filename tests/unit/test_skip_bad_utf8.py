"""Resuming with ``skip`` reports an element's invalid UTF-8 where a whole decode does.

The untyped decode that splits off the skipped elements does not check UTF-8 inside
strings (msgspec.Raw), so the typed decode of the rest is the one that fails, on text
that no longer starts at the run's ``[``: the offset must be mapped back.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest

from asyncsports.errors import DecodeError
from asyncsports.jsonstream import decode_array

BODY = (
    b"["
    + b",".join(b'{"id":%d,"s":"%s"}' % (i, b"\xff" if i == 5 else b"ok") for i in range(8))
    + b"]"
)


async def chunks(size: int) -> AsyncIterator[bytes]:
    for i in range(0, len(BODY), size):
        yield BODY[i : i + size]


@pytest.mark.parametrize("size", [7, 1000])
@pytest.mark.parametrize("skip", [0, 1, 2, 5])
async def test_bad_utf8_after_a_skip(skip: int, size: int) -> None:
    with pytest.raises(DecodeError) as info:
        async for _ in decode_array(chunks(size), msgspec.json.Decoder(list[Any]), skip=skip):
            pass
    err = info.value
    assert (err.reason, err.path, err.offset) == (
        "invalid UTF-8: invalid start byte",
        "$[5]",
        BODY.index(b"\xff"),
    )
    assert err.snippet.startswith('{"id":5,"s":"')


async def test_a_skipped_element_is_not_decoded() -> None:
    batches = [b async for b in decode_array(chunks(1000), msgspec.json.Decoder(list[Any]), skip=6)]
    assert [x["id"] for b in batches for x in b] == [6, 7]
